//! Reading the journal at start, its snapshot read by code fetched only
//! when there is a snapshot to read.
//!
//! A first visit has none, and most histories never reach one (one is
//! written every `lifeline_engine::SNAPSHOT_EVERY` positions, or by a
//! session's delete), so the snapshot's reader — every decoder of the
//! projection's views, 14 KB of the controller's gzip size — is a split
//! module (docs/benchmarks.md, "Twenty-third stop"). The service worker
//! precaches it with the others, so a start offline reads it too.

use lifeline_core::phrase::{JournalFault, Phrase};
use wasm_split_helpers::SplitLoaderError;

use crate::journal::{read_snapshot_text, Journal, Load, Loaded, ReadSnapshot};

/// What `journal` holds. At most two loads: the first says whether a
/// snapshot is there; the second, with the reader, reads it.
pub async fn load(journal: &Journal) -> Result<Loaded, Phrase> {
    let mut read = None;
    for _ in 0..2 {
        match journal.load(read).await {
            Ok(Load::Loaded(loaded)) => return Ok(loaded),
            Ok(Load::SnapshotReaderNeeded) => {
                // Nothing was read yet, so nothing is lost if this fails.
                read = Some(reader().await.map_err(|_| Phrase::HistoryNotLoaded)?);
            }
            Err(e) => return Err(super::journal_fault(&e)),
        }
    }
    Err(Phrase::Journal {
        fault: JournalFault::Invalid {
            detail: "the journal asked for a snapshot reader it was given".into(),
        },
    })
}

#[wasm_split_helpers::wasm_split(snapshot, fallible)]
fn reader() -> Result<ReadSnapshot, SplitLoaderError> {
    Ok(read_snapshot_text)
}
