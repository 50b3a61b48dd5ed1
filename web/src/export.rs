//! Evidence export (a download) and import (a read-only view), docs/export.md.

use lifeline_core::{SessionId, ViewDelta};

pub fn expect_download(_session: SessionId, _file_name: String, _bytes: u64) {}

pub fn imported(
    _file_name: String,
    _session: SessionId,
    _title: String,
    _reset: bool,
    _deltas: Vec<ViewDelta>,
) {
}
