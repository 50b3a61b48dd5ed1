//! Evidence export and read-only import (docs/export.md).
//!
//! Export reads the journal twice in batches — first what belongs to the
//! session, then its lines ([`lifeline_core::export::Scan`]) — so it never
//! holds the whole journal; it reads the artifacts they name, and posts the
//! ustar archive to the page as a transferred `ArrayBuffer` right after an
//! `ExportReady` message: binary, so the JSON bound does not apply.
//!
//! Import takes an archive the same way (`Import`, then the buffer), folds
//! its `session.jsonl` into a projection of its own and sends the page the
//! transcript. Nothing of it touches the journal.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use js_sys::{Array, ArrayBuffer, Uint8Array};
use lifeline_core::export::{self, ImportError, MAX_ARCHIVE_BYTES};
use lifeline_core::stored_output::{Slice, StoredOutput};
use lifeline_core::view::session_deltas;
use lifeline_core::{CommandId, Digest, JournalEntry, RetentionPolicy, SessionId, ViewDelta};
use lifeline_engine::KeptRead;
use lifeline_protocol::{encode, ControllerToPage, Level, MAX_MESSAGE_BYTES};
use wasm_bindgen_futures::spawn_local;
use wasm_split_helpers::SplitLoaderError;

use lifeline_core::phrase::Phrase;

use crate::journal::{Journal, JournalError};
use crate::shell::{clear_notice, notice, post, post_worded, Shell};
use crate::web::{now, scope};

const KEY: &str = lifeline_protocol::EXPORT_NOTICE;
/// Entries read per round trip.
const READ: usize = 10_000;
/// Deltas per `Imported` message stay below this many encoded bytes.
const CHUNK_BYTES: usize = MAX_MESSAGE_BYTES / 2;

thread_local! {
    /// The `Import` header whose buffer is the next binary message.
    static PENDING: RefCell<Option<(String, u64)>> = const { RefCell::new(None) };
}

/// Hands every readable entry up to position `through` to `each`, a batch
/// at a time in position order; answers how many were set aside as
/// unreadable and the last position read.
async fn each_batch(
    journal: &Journal,
    through: u64,
    each: &mut dyn FnMut(&[JournalEntry]),
) -> Result<(usize, u64), JournalError> {
    let mut after = 0u64;
    let mut quarantined = 0usize;
    loop {
        let tail = journal.entries_after(after, READ).await?;
        let next = tail.last_position(after).min(through);
        quarantined += tail.quarantined.len();
        let end = tail.entries.partition_point(|e| e.position <= through);
        each(&tail.entries[..end]);
        if next == after {
            return Ok((quarantined, after));
        }
        after = next;
    }
}

pub fn export(shell: &Rc<Shell>, session: SessionId) {
    let Some(journal) = shell.journal() else {
        return notice(KEY, Level::Error, Phrase::ExportNoJournal);
    };
    notice(KEY, Level::Info, Phrase::Exporting);
    spawn_local(async move {
        match exporting(journal, session).await {
            Ok(export) => export.await,
            Err(_) => notice(KEY, Level::Error, Phrase::NotLoaded),
        }
    });
}

/// The export itself, in a module of its own that `cargo xtask build`
/// splits off: most sessions are never exported. The module is fetched the
/// first time; if it cannot be, nothing was read.
#[wasm_split_helpers::wasm_split(export, fallible)]
fn exporting(
    journal: Rc<Journal>,
    session: SessionId,
) -> Result<Pin<Box<dyn Future<Output = ()>>>, SplitLoaderError> {
    Ok(Box::pin(async move {
        // Two passes over the journal, a batch at a time: the first learns
        // what belongs to the session (identities only), the second keeps
        // its lines. The journal is never held whole.
        let mut scan = export::Scan::new(session);
        let mut unreadable = 0usize;
        // The second pass stops where the first did: entries appended
        // meanwhile belong to the next export, not half to this one.
        let failed =
            |e: JournalError| notice(KEY, Level::Error, Phrase::ExportFailed { fault: e.fault() });
        let through = match each_batch(&journal, u64::MAX, &mut |batch| scan.feed(batch)).await {
            Ok((q, last)) => {
                unreadable += q;
                last
            }
            Err(e) => return failed(e),
        };
        let selection = scan.finish();
        if selection.is_empty() {
            return notice(KEY, Level::Error, Phrase::ExportNoSession);
        }
        let mut lines = Vec::new();
        if let Err(e) = each_batch(&journal, through, &mut |batch| {
            lines.extend(selection.lines(batch))
        })
        .await
        {
            return failed(e);
        }
        let mut artifacts: Vec<(Digest, String)> = Vec::new();
        let mut missing = 0usize;
        for digest in selection.artifact_digests() {
            match journal.artifact(&digest).await {
                Ok(Some(data)) => artifacts.push((digest, data)),
                _ => missing += 1,
            }
        }
        let bytes = export::bundle(&lines, &artifacts, now().0 / 1000);
        let file_name = export::file_name(session);
        post(ControllerToPage::ExportReady {
            session,
            file_name,
            bytes: bytes.len() as u64,
        });
        let buffer = Uint8Array::from(&bytes[..]).buffer();
        if let Err(e) = scope().post_message_with_transfer(&buffer, &Array::of1(&buffer)) {
            return notice(
                KEY,
                Level::Error,
                Phrase::ExportHandOff {
                    detail: lifeline_store::exception_name(&e),
                },
            );
        }
        if unreadable == 0 && missing == 0 {
            clear_notice(KEY);
        } else {
            notice(
                KEY,
                Level::Warning,
                Phrase::ExportedWithGaps {
                    unreadable: u32::try_from(unreadable).unwrap_or(u32::MAX),
                    missing: u32::try_from(missing).unwrap_or(u32::MAX),
                },
            );
        }
    }))
}

/// An `Import` header: the archive follows as the next binary message.
pub fn expect_import(file_name: String, bytes: u64) {
    if bytes > MAX_ARCHIVE_BYTES as u64 {
        return notice(
            KEY,
            Level::Error,
            Phrase::ImportTooLarge {
                file: file_name,
                bytes,
                limit: MAX_ARCHIVE_BYTES as u64,
            },
        );
    }
    PENDING.with(|p| *p.borrow_mut() = Some((file_name, bytes)));
}

/// A binary message from the page: the archive an `Import` announced.
pub fn received_buffer(buffer: ArrayBuffer) {
    let Some((file_name, bytes)) = PENDING.with(|p| p.borrow_mut().take()) else {
        return notice(KEY, Level::Error, Phrase::UnaskedFile);
    };
    if buffer.byte_length() as u64 != bytes {
        return notice(
            KEY,
            Level::Error,
            Phrase::ImportTruncated {
                file: file_name,
                got: buffer.byte_length() as u64,
                expected: bytes,
            },
        );
    }
    let data = Uint8Array::new(&buffer).to_vec();
    spawn_local(async move {
        let Ok(imported) = importing(data, file_name.clone()).await else {
            return notice(KEY, Level::Error, Phrase::NotLoaded);
        };
        match imported {
            Ok((session, title, deltas)) => {
                send_view(&file_name, session, &title, deltas);
                clear_notice(KEY);
            }
            Err(e) => {
                crate::web::log(&e.to_string());
                notice(
                    KEY,
                    Level::Error,
                    Phrase::ImportFailed {
                        file: file_name,
                        fault: e.fault(),
                    },
                );
            }
        }
    });
}

/// [`import`], in the export's module of its own (`cargo xtask build`
/// splits it off): fetched the first time, and if it cannot be, nothing
/// was read.
#[wasm_split_helpers::wasm_split(export, fallible)]
fn importing(data: Vec<u8>, file_name: String) -> Result<Imported, SplitLoaderError> {
    Ok(import(&data, &file_name))
}

/// An archive's session, title and transcript, or why it could not be read.
type Imported = Result<(SessionId, String, Vec<ViewDelta>), ImportError>;

fn import(
    data: &[u8],
    file_name: &str,
) -> Result<(SessionId, String, Vec<ViewDelta>), ImportError> {
    let jsonl = if file_name.ends_with(".jsonl") {
        String::from_utf8(data.to_vec())
            .map_err(|_| ImportError::Archive("the file is not UTF-8 text".into()))?
    } else {
        export::unbundle(data)?.0
    };
    let imported = export::import_session(&jsonl, RetentionPolicy::default())?;
    let deltas = session_deltas(&imported.projection, imported.session);
    Ok((imported.session, imported.title, deltas))
}

/// The transcript in messages below the bound.
fn send_view(file_name: &str, session: SessionId, title: &str, deltas: Vec<ViewDelta>) {
    let mut chunk: Vec<ViewDelta<String>> = Vec::new();
    let mut size = 0usize;
    let mut reset = true;
    let flush = |chunk: &mut Vec<ViewDelta<String>>, reset: &mut bool| {
        post_worded(&ControllerToPage::Imported {
            file_name: file_name.to_string(),
            session,
            title: title.to_string(),
            reset: *reset,
            deltas: std::mem::take(chunk),
        });
        *reset = false;
    };
    for delta in deltas {
        // Worded once, and sized as the page receives it: sizing the
        // phrase form would link the phrases' wire encoding (about 9 KB of
        // code) into a worker that never sends it.
        let delta = crate::words::word_delta(delta);
        let bytes = encode(&delta).len();
        if !chunk.is_empty() && size + bytes > CHUNK_BYTES {
            flush(&mut chunk, &mut reset);
            size = 0;
        }
        size += bytes;
        chunk.push(delta);
    }
    if !chunk.is_empty() || reset {
        flush(&mut chunk, &mut reset);
    }
}

/// Reads the artifacts an output read needs and hands them to the engine.
pub fn read_artifacts(
    shell: &Rc<Shell>,
    command: CommandId,
    read: KeptRead,
    stored: Box<StoredOutput>,
    plan: Vec<Slice>,
    digests: Vec<Digest>,
) {
    let journal = shell.journal();
    let shell = shell.clone();
    spawn_local(async move {
        let mut artifacts = Vec::with_capacity(digests.len());
        for digest in digests {
            let data = match &journal {
                Some(j) => j.artifact(&digest).await.ok().flatten(),
                None => None,
            };
            artifacts.push((digest, data));
        }
        shell.input(|e, _| e.handle_artifacts_read(command, read, &stored, &plan, &artifacts));
    });
}

/// Posts a command's whole output to the page: `ExportReady`, then the
/// bytes as a transferred buffer (binary, outside the JSON bound).
pub fn save_output(session: SessionId, file_name: String, bytes: &[u8]) {
    post(ControllerToPage::ExportReady {
        session,
        file_name,
        bytes: bytes.len() as u64,
    });
    let buffer = Uint8Array::from(bytes).buffer();
    if let Err(e) = scope().post_message_with_transfer(&buffer, &Array::of1(&buffer)) {
        notice(
            "output",
            Level::Error,
            Phrase::ExportHandOff {
                detail: lifeline_store::exception_name(&e),
            },
        );
    }
}
