//! What went wrong with the profile and credential store, as a person is
//! told it: the store's own error (`lifeline_store::ConfigError`) maps to
//! this, and the page words it from its catalog. Free text from outside
//! (the browser's error, a damaged record's description) stays a `detail`.

use core::fmt;

/// Which records the store keeps a bounded number of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoredKind {
    Profiles,
    Credentials,
}

/// Why the profile and credential store refused or failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreFault {
    /// IndexedDB is missing, refused to open, or was closed by the browser.
    Unavailable { detail: String },
    /// Written by a newer build, whose schema is above `schema`.
    NewerSchema { schema: u32 },
    /// Another tab holds the store open at an older version.
    Blocked,
    /// Another tab is upgrading the store; this connection was closed.
    VersionChange,
    /// This tab closed the connection.
    Closed,
    /// The origin's storage quota is full; nothing stored was lost.
    QuotaExceeded,
    /// A read or write failed.
    Operation { detail: String },
    /// The profile cannot be stored as it is.
    InvalidProfile { detail: String },
    /// The stored profile was changed elsewhere since this edit began.
    StaleRevision { stored: u64, offered: u64 },
    /// The store already holds the most it may of `what`.
    TooMany { what: StoredKind, max: u64 },
    /// A credential's label is blank or longer than `max` bytes.
    InvalidLabel { len: u64, max: u64 },
    /// A credential's secret is empty or longer than `max` bytes.
    InvalidSecret { len: u64, max: u64 },
    /// WebCrypto is missing or refused (the exception's name).
    Crypto { detail: String },
    /// A stored record this operation needs is unreadable.
    Corrupt { detail: String },
}

impl fmt::Display for StoreFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use StoreFault as F;
        match self {
            F::Unavailable { detail } => write!(
                f,
                "the profile and credential store could not be opened or was closed by the browser ({detail}); reload to retry"
            ),
            F::NewerSchema { schema } => write!(
                f,
                "the profile and credential store was written by a newer Lifeline (schema above {schema}); reload to get the newer version — nothing was changed"
            ),
            F::Blocked => f.write_str(
                "another Lifeline tab is holding an older profile store open; close or reload the other tabs",
            ),
            F::VersionChange => f.write_str(
                "a newer Lifeline in another tab is upgrading the profile store, so this tab closed its connection; reload this tab to continue",
            ),
            F::Closed => f.write_str("the profile store connection was closed by this tab"),
            F::QuotaExceeded => f.write_str(
                "the browser's storage for Lifeline is full: nothing was written and everything stored is kept; free space (delete old sessions or artifacts) and try again",
            ),
            F::Operation { detail } => write!(
                f,
                "profile store operation failed: {detail}; nothing of it was written — it can be retried"
            ),
            F::InvalidProfile { detail } => write!(f, "the profile cannot be stored: {detail}"),
            F::StaleRevision { stored, offered } => write!(
                f,
                "the profile was changed elsewhere (stored revision {stored}, this edit would be revision {offered}); reload the profile and make the edit again"
            ),
            F::TooMany {
                what: StoredKind::Profiles,
                max,
            } => write!(
                f,
                "there are already {max} profiles, the most Lifeline keeps; delete one you no longer need first"
            ),
            F::TooMany {
                what: StoredKind::Credentials,
                max,
            } => write!(
                f,
                "there are already {max} credentials, the most Lifeline keeps; delete one you no longer need first"
            ),
            F::InvalidLabel { len, max } => write!(
                f,
                "a credential needs a label of 1 to {max} bytes (this one has {len}); nothing was saved"
            ),
            F::InvalidSecret { len, max } => write!(
                f,
                "a credential's secret must be 1 to {max} bytes (this one has {len}); nothing was saved"
            ),
            F::Crypto { detail } => write!(
                f,
                "the browser's WebCrypto could not protect the credential ({detail}); nothing was saved — Lifeline needs a browser with crypto.subtle in workers (a secure context: https or localhost)"
            ),
            F::Corrupt { detail } => write!(
                f,
                "a stored record is damaged: {detail}; delete it in Profiles and enter it again"
            ),
        }
    }
}
