//! The writer's Web Lock, held for the rest of the worker's life.
//!
//! A [`WriterLock`] can only be had from [`WriterLock::hold_for_life`],
//! which resolves once the browser granted the exclusive lock and never
//! lets it go: the browser releases it when the worker ends (crashed,
//! closed, terminated), which is exactly when another controller may
//! write. Holding one is what lets the journal trust its own claim
//! ([`crate::journal::Journal::claim_writer_held`]).

pub use lifeline_locks::LockError;

/// Proof that this worker holds an exclusive Web Lock until it ends. Not
/// `Clone`, and made only by [`WriterLock::hold_for_life`].
#[derive(Debug)]
pub struct WriterLock {
    _held: (),
}

impl WriterLock {
    /// Waits until this worker holds the exclusive Web Lock `name`, then
    /// keeps it for the worker's whole life.
    pub async fn hold_for_life(name: &str) -> Result<WriterLock, LockError> {
        lifeline_locks::hold_for_life(name).await?;
        Ok(WriterLock { _held: () })
    }
}
