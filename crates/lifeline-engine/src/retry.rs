//! When a failed provider request is sent again, and after how long.
//!
//! Only a request the provider refused before doing any work is safe to send
//! again: an HTTP 429 (rate limited), 503 or 529 (overloaded, or Anthropic's
//! `overloaded_error` in an error status), or a connection that failed before
//! any response byte. Everything else stays as it ended: a 4xx refusal is
//! the same on every attempt, and a reply that had begun (or a request whose
//! headers never came) may have been acted on.
//!
//! The engine has no randomness, so the backoff's jitter is derived from the
//! request's identity and the attempt number: spread across requests, and
//! the same on a replay.

use lifeline_core::profile::AgentBudget;
use lifeline_core::{Millis, ProviderFailureClass};

use crate::{FailedAt, ProviderFailure};

/// The first backoff, before jitter; it doubles per attempt.
pub const BASE_MS: u64 = 1_000;
/// The longest backoff between two attempts, before jitter.
pub const CAP_MS: u64 = 30_000;

/// Whether the provider refused `failure` before processing it.
pub fn refused_before_work(failure: &ProviderFailure) -> bool {
    match failure.at {
        // A connect timeout is not here: it comes from the engine itself,
        // and by then the request may have reached the provider.
        FailedAt::NoResponse => failure.class == ProviderFailureClass::Transport,
        FailedAt::Status(429 | 503 | 529) => true,
        FailedAt::Status(_) => failure.class == ProviderFailureClass::Overloaded,
        FailedAt::Reply => false,
    }
}

/// The backoff after attempt `attempt` (1 for the first) failed: capped
/// exponential, with "equal jitter" (between half and all of it) so that
/// many clients refused together do not all come back at once.
pub fn backoff_ms(attempt: u32, seed: u128) -> u64 {
    let doubled = BASE_MS.saturating_mul(1u64 << attempt.saturating_sub(1).min(20));
    let full = doubled.min(CAP_MS);
    let half = full / 2;
    half + mix(seed ^ u128::from(attempt)) % (full - half + 1)
}

/// How long to wait before attempt `attempt + 1`, or `None` when the bound
/// says the request has failed for good: `attempt` reached the budget's
/// attempts, or the wait would end after `max_retry_ms` from the first
/// attempt (`elapsed_ms` ago). A wait the provider asked for is honoured as
/// it is (never shortened, so a rate limit is not hit again at once).
pub fn next_wait_ms(
    budget: &AgentBudget,
    attempt: u32,
    elapsed_ms: u64,
    retry_after_ms: Option<u64>,
    seed: u128,
) -> Option<u64> {
    if attempt >= budget.max_attempts {
        return None;
    }
    let wait = retry_after_ms.unwrap_or_else(|| backoff_ms(attempt, seed));
    (elapsed_ms.saturating_add(wait) <= budget.max_retry_ms).then_some(wait)
}

/// What a live provider request waits for; [`crate::TimerKey::Provider`]
/// fires at its next deadline.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(Debug))]
pub(crate) enum Wait {
    /// Not sent, or aborted: no deadline.
    Nothing,
    /// Sent at `since`; the response headers have not arrived.
    Response { since: Millis },
    /// The response began; its last byte arrived at `last`.
    Bytes { last: Millis },
    /// A local model has been loading since `since`: `read` of its file's
    /// `total` bytes so far, the last of them at `last`. Not the connect
    /// timeout's business: a large file from a slow disk is not a stalled
    /// server. [`LOAD_STALL_MS`] without progress ends it.
    Loading {
        since: Millis,
        last: Millis,
        read: u64,
        total: u64,
    },
    /// Refused before any work: the next attempt goes out at `at`.
    Retry {
        at: Millis,
        class: ProviderFailureClass,
    },
}

/// How long a local model's load may go without reading more of its file
/// (or, before the first read, without starting) before it counts as hung
/// and ends the request. Two minutes: the engine's own first download
/// (about 3 MB gzip) and its compilation come before the first read and
/// take seconds on a slow link; a load that keeps reading, however large
/// the file, is never cut short. Once loaded, the first token must come
/// within the profile's connect timeout, like a server's response.
pub const LOAD_STALL_MS: u64 = 120_000;

/// Where a load that has made progress at `last` stands at `now`: hung
/// (`None`), or the whole seconds it has taken since `since` and when the
/// timer looks again (each second, so the page's count moves, or at the
/// stall deadline if sooner).
pub(crate) fn loading(since: Millis, last: Millis, now: Millis) -> Option<(u32, Millis)> {
    let deadline = last.plus(LOAD_STALL_MS);
    if now >= deadline {
        return None;
    }
    let elapsed = now.0.saturating_sub(since.0);
    let next = Millis(since.0 + (elapsed / 1000 + 1) * 1000).min(deadline);
    Some((u32::try_from(elapsed / 1000).unwrap_or(u32::MAX), next))
}

/// What the provider timer firing at `now` means for `wait`.
#[derive(PartialEq, Eq)]
#[cfg_attr(test, derive(Debug))]
pub(crate) enum Due {
    Nothing,
    /// No deadline passed (bytes arrived since it was set): set it again.
    Later(Millis),
    /// The connect or idle timeout expired: the reply ends as broken.
    Timeout(ProviderFailureClass),
    /// The retry wait is over: send the next attempt.
    Send,
    /// The retry wait goes on: show the seconds left.
    Countdown {
        at: Millis,
        class: ProviderFailureClass,
    },
}

pub(crate) fn due(wait: Wait, connect_ms: u64, idle_ms: u64, now: Millis) -> Due {
    let (deadline, class) = match wait {
        // The engine looks at a load itself (see `loading`).
        Wait::Nothing | Wait::Loading { .. } => return Due::Nothing,
        Wait::Response { since } => (since.plus(connect_ms), ProviderFailureClass::ConnectTimeout),
        Wait::Bytes { last } => (last.plus(idle_ms), ProviderFailureClass::IdleTimeout),
        Wait::Retry { at, .. } if now >= at => return Due::Send,
        Wait::Retry { at, class } => return Due::Countdown { at, class },
    };
    if now < deadline {
        Due::Later(deadline)
    } else {
        Due::Timeout(class)
    }
}

/// The whole seconds left until `at` (at least 1), and when that number
/// next changes.
pub(crate) fn countdown(at: Millis, now: Millis) -> (u32, Millis) {
    let seconds = at.0.saturating_sub(now.0).div_ceil(1000).max(1);
    let next = Millis(at.0.saturating_sub((seconds - 1) * 1000));
    (u32::try_from(seconds).unwrap_or(u32::MAX), next)
}

/// SplitMix64's finaliser over both halves: a cheap, well-spread hash.
fn mix(seed: u128) -> u64 {
    let mut z = (seed as u64) ^ ((seed >> 64) as u64).rotate_left(29);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(class: ProviderFailureClass, at: FailedAt) -> ProviderFailure {
        ProviderFailure {
            class,
            message: String::new(),
            partial_text: String::new(),
            at,
            retry_after_ms: None,
            reason: None,
        }
    }

    #[test]
    fn only_refusals_before_any_work_are_retried() {
        use ProviderFailureClass as C;
        let yes = [
            failure(C::RateLimit, FailedAt::Status(429)),
            failure(C::Overloaded, FailedAt::Status(503)),
            failure(C::Overloaded, FailedAt::Status(529)),
            // Anthropic's overloaded_error under another status.
            failure(C::Overloaded, FailedAt::Status(500)),
            failure(C::Transport, FailedAt::NoResponse),
        ];
        for f in &yes {
            assert!(refused_before_work(f), "{f:?}");
        }
        let no = [
            failure(C::InvalidRequest, FailedAt::Status(400)),
            failure(C::Auth, FailedAt::Status(401)),
            failure(C::Auth, FailedAt::Status(403)),
            failure(C::NotFound, FailedAt::Status(404)),
            failure(C::InvalidRequest, FailedAt::Status(422)),
            failure(C::ContextLength, FailedAt::Status(400)),
            failure(C::Server, FailedAt::Status(500)),
            // After the first byte: a rate limit or overload inside the
            // stream, a cut, a stall, a malformed chunk.
            failure(C::RateLimit, FailedAt::Reply),
            failure(C::Overloaded, FailedAt::Reply),
            failure(C::Cut, FailedAt::Reply),
            failure(C::Transport, FailedAt::Reply),
            failure(C::IdleTimeout, FailedAt::Reply),
            failure(C::Malformed, FailedAt::Reply),
            failure(C::ConnectTimeout, FailedAt::NoResponse),
            failure(C::Cancelled, FailedAt::NoResponse),
        ];
        for f in &no {
            assert!(!refused_before_work(f), "{f:?}");
        }
    }

    #[test]
    fn backoff_doubles_within_jitter_and_is_capped() {
        for seed in [0u128, 1, 0xdead_beef, u128::MAX] {
            for attempt in 1..=40 {
                let full = (BASE_MS << (attempt - 1).min(20)).min(CAP_MS);
                let wait = backoff_ms(attempt, seed);
                assert!(
                    (full / 2..=full).contains(&wait),
                    "{attempt}: {wait} not in [{}, {full}]",
                    full / 2
                );
                assert_eq!(wait, backoff_ms(attempt, seed), "deterministic");
            }
        }
        // Jitter spreads: not every request waits the same.
        let waits: std::collections::BTreeSet<u64> =
            (0..32u128).map(|seed| backoff_ms(3, seed)).collect();
        assert!(waits.len() > 8, "{waits:?}");
    }

    #[test]
    fn a_load_is_hung_only_after_two_minutes_without_progress() {
        let since = Millis(10_000);
        // Progress keeps it going, however long the whole load takes.
        let last = Millis(600_000);
        assert_eq!(
            loading(since, last, Millis(600_500)),
            Some((590, Millis(601_000)))
        );
        assert_eq!(
            loading(since, last, Millis(719_999)),
            Some((709, Millis(720_000)))
        );
        assert_eq!(loading(since, last, Millis(720_000)), None);
        // Before the first read the start counts as progress.
        assert_eq!(
            loading(since, since, Millis(10_000)),
            Some((0, Millis(11_000)))
        );
        assert_eq!(loading(since, since, Millis(130_000)), None);
        // The connect and idle timeouts leave a load alone.
        let wait = Wait::Loading {
            since,
            last: since,
            read: 0,
            total: 1,
        };
        assert_eq!(due(wait, 1, 1, Millis(u64::MAX / 2)), Due::Nothing);
    }

    #[test]
    fn the_idle_timeout_starts_again_with_every_byte() {
        let (connect, idle) = (30_000, 60_000);
        // Bytes kept arriving: the timer set at the first byte finds the
        // deadline moved, and sets itself for the new one.
        let wait = Wait::Bytes {
            last: Millis(50_000),
        };
        assert_eq!(
            due(wait, connect, idle, Millis(60_000)),
            Due::Later(Millis(110_000))
        );
        assert_eq!(
            due(wait, connect, idle, Millis(110_000)),
            Due::Timeout(ProviderFailureClass::IdleTimeout)
        );
        // No headers within the connect timeout.
        let wait = Wait::Response {
            since: Millis(1_000),
        };
        assert_eq!(
            due(wait, connect, idle, Millis(30_999)),
            Due::Later(Millis(31_000))
        );
        assert_eq!(
            due(wait, connect, idle, Millis(31_000)),
            Due::Timeout(ProviderFailureClass::ConnectTimeout)
        );
        // Stopped or not sent: nothing is due.
        assert_eq!(
            due(Wait::Nothing, connect, idle, Millis(1 << 40)),
            Due::Nothing
        );
    }

    #[test]
    fn a_retry_wait_counts_down_whole_seconds_and_then_sends() {
        let class = ProviderFailureClass::RateLimit;
        let at = Millis(10_000);
        let wait = Wait::Retry { at, class };
        assert_eq!(due(wait, 1, 1, Millis(7_500)), Due::Countdown { at, class });
        assert_eq!(due(wait, 1, 1, at), Due::Send);
        // 2.5 s left shows 3 s, and changes to 2 s at 8 s.
        assert_eq!(countdown(at, Millis(7_500)), (3, Millis(8_000)));
        assert_eq!(countdown(at, Millis(8_000)), (2, Millis(9_000)));
        assert_eq!(countdown(at, Millis(9_999)), (1, at));
    }

    #[test]
    fn the_bound_is_attempts_or_total_time() {
        let budget = AgentBudget::default();
        assert_eq!(budget.max_attempts, 4);
        assert!(next_wait_ms(&budget, 1, 0, None, 7).is_some());
        assert!(next_wait_ms(&budget, 3, 0, None, 7).is_some());
        assert_eq!(next_wait_ms(&budget, 4, 0, None, 7), None, "attempt cap");
        // Retry-After is honoured as given...
        assert_eq!(next_wait_ms(&budget, 1, 0, Some(3_000), 7), Some(3_000));
        assert_eq!(next_wait_ms(&budget, 1, 0, Some(0), 7), Some(0));
        // ...unless it ends beyond the time bound.
        assert_eq!(next_wait_ms(&budget, 1, 0, Some(121_000), 7), None);
        assert_eq!(next_wait_ms(&budget, 2, 119_000, Some(2_000), 7), None);
        assert_eq!(
            next_wait_ms(&budget, 2, 118_000, Some(2_000), 7),
            Some(2_000)
        );
        let once = AgentBudget {
            max_attempts: 1,
            ..AgentBudget::default()
        };
        assert_eq!(next_wait_ms(&once, 1, 0, Some(1), 7), None);
    }
}
