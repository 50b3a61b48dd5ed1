//! Evidence export and read-only import (docs/export.md).

use std::rc::Rc;

use lifeline_core::SessionId;

use crate::shell::{notice, Shell};

pub fn export(_shell: &Rc<Shell>, _session: SessionId) {
    notice("export", lifeline_protocol::Level::Error, "export is not available yet");
}

pub fn expect_import(_file_name: String, _bytes: u64) {
    notice("export", lifeline_protocol::Level::Error, "import is not available yet");
}
