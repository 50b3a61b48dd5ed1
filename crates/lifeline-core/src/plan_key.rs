//! The idempotency key of a built-in agent's planned command: derived from
//! its turn and place in the plan, so that the agent, the projection and
//! the view all find the same command again without storing which turn it
//! belongs to.

use sha2::{Digest as _, Sha256};

use crate::id::{IdempotencyKey, TurnId};

/// The idempotency key of the `index`th planned command of `turn`.
pub fn plan_key(turn: TurnId, index: usize) -> IdempotencyKey {
    let mut h = Sha256::new();
    h.update(b"lifeline built-in agent plan key\0");
    h.update(turn.as_u128().to_be_bytes());
    h.update((index as u64).to_be_bytes());
    let bytes = h.finalize();
    let mut raw = [0u8; 16];
    raw.copy_from_slice(&bytes[..16]);
    // Ids must be nonzero; a zero prefix of SHA-256 will not happen, but the
    // type's rule is kept rather than assumed.
    IdempotencyKey::from_u128(u128::from_be_bytes(raw).max(1))
        .unwrap_or_else(|_| IdempotencyKey::from_u128(1).expect("1 is a valid id"))
}
