//! Command binding and the command record.
//!
//! An idempotency key is bound to everything that decides what a command does
//! and where: the workspace lease, the runtime identity and generation, the
//! working directory, the capability set, the budget and the command line.
//! Reusing a key with any of those changed is refused and the field is named,
//! because silently returning the old command would run the wrong thing.

use crate::flat::FlatSet;
use core::fmt;
use lifeline_decode::Decode;
use lifeline_encode::Encode;

use serde::{Deserialize, Serialize};

use crate::id::{
    CommandId, Generation, IdempotencyKey, LeaseId, Millis, RuntimeId, SessionId, WorkspaceId,
};
use crate::schema::{check_text, limits, Schema, V1};

/// Where and with what a command may run, and its budget. Compared field by
/// field on idempotent re-admission.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct Binding {
    pub workspace: WorkspaceId,
    pub lease: LeaseId,
    pub generation: Generation,
    pub runtime: RuntimeId,
    pub session: SessionId,
    /// Absolute path inside the workspace ("/", "/src").
    pub working_directory: String,
    /// Capability names the runtime may use for this command ("fs.write", "js").
    pub capabilities: FlatSet<String>,
    pub budget: Budget,
    pub command_line: String,
}

/// Limits a command runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Absolute time after which the command is timed out (caller's clock).
    pub deadline: Millis,
    /// Output beyond this many bytes (stdout + stderr) is counted but not kept.
    pub max_output_bytes: u64,
}

/// A field of [`Binding`], as named in a mismatch error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(rename_all = "snake_case")]
pub enum BindingField {
    Workspace,
    Lease,
    Generation,
    Runtime,
    Session,
    WorkingDirectory,
    Capabilities,
    Deadline,
    MaxOutputBytes,
    CommandLine,
}

impl BindingField {
    pub fn as_str(self) -> &'static str {
        match self {
            BindingField::Workspace => "workspace",
            BindingField::Lease => "lease",
            BindingField::Generation => "generation",
            BindingField::Runtime => "runtime identity",
            BindingField::Session => "session",
            BindingField::WorkingDirectory => "working directory",
            BindingField::Capabilities => "capability set",
            BindingField::Deadline => "budget deadline",
            BindingField::MaxOutputBytes => "budget max output bytes",
            BindingField::CommandLine => "command line",
        }
    }
}

/// The key was already bound to a command with a different binding.
/// Values are not echoed: a command line may hold something private.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
pub struct BindingMismatch {
    pub key: IdempotencyKey,
    pub existing: CommandId,
    pub fields: Vec<BindingField>,
}

impl fmt::Display for BindingMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.fields.iter().map(|x| x.as_str()).collect();
        write!(
            f,
            "idempotency key {} is already bound to command {} with a different {}; use a new idempotency key to run a different command",
            self.key,
            self.existing,
            names.join(", ")
        )
    }
}

impl Binding {
    /// Fields that differ, in declaration order.
    pub fn differences(&self, other: &Binding) -> Vec<BindingField> {
        let mut out = Vec::new();
        let mut check = |same: bool, field| {
            if !same {
                out.push(field)
            }
        };
        check(self.workspace == other.workspace, BindingField::Workspace);
        check(self.lease == other.lease, BindingField::Lease);
        check(
            self.generation == other.generation,
            BindingField::Generation,
        );
        check(self.runtime == other.runtime, BindingField::Runtime);
        check(self.session == other.session, BindingField::Session);
        check(
            self.working_directory == other.working_directory,
            BindingField::WorkingDirectory,
        );
        check(
            self.capabilities == other.capabilities,
            BindingField::Capabilities,
        );
        check(
            self.budget.deadline == other.budget.deadline,
            BindingField::Deadline,
        );
        check(
            self.budget.max_output_bytes == other.budget.max_output_bytes,
            BindingField::MaxOutputBytes,
        );
        check(
            self.command_line == other.command_line,
            BindingField::CommandLine,
        );
        out
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.generation.0 == 0 {
            return Err("generation must be at least 1".into());
        }
        check_text(
            "working directory",
            &self.working_directory,
            limits::MAX_WORKING_DIRECTORY_BYTES,
        )?;
        if !self.working_directory.starts_with('/') {
            return Err("working directory must be an absolute workspace path".into());
        }
        if self
            .working_directory
            .split('/')
            .any(|part| part == ".." || part == ".")
        {
            return Err("working directory must not contain . or .. segments".into());
        }
        if self.capabilities.len() > limits::MAX_CAPABILITIES {
            return Err(format!(
                "{} capabilities; the limit is {}",
                self.capabilities.len(),
                limits::MAX_CAPABILITIES
            ));
        }
        for cap in &self.capabilities {
            let ok = !cap.is_empty()
                && cap.len() <= limits::MAX_CAPABILITY_BYTES
                && cap
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
            if !ok {
                return Err(format!(
                    "capability {cap:?} must be 1-{} bytes of a-z 0-9 . _ -",
                    limits::MAX_CAPABILITY_BYTES
                ));
            }
        }
        if self.budget.max_output_bytes > limits::MAX_OUTPUT_BUDGET_BYTES {
            return Err(format!(
                "max output bytes {} exceeds the limit {}",
                self.budget.max_output_bytes,
                limits::MAX_OUTPUT_BUDGET_BYTES
            ));
        }
        check_text(
            "command line",
            &self.command_line,
            limits::MAX_COMMAND_LINE_BYTES,
        )?;
        if self.command_line.trim().is_empty() {
            return Err("command line is empty".into());
        }
        Ok(())
    }
}

/// The durable admission of a command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Encode, Deserialize, Decode)]
#[serde(deny_unknown_fields)]
pub struct CommandRecord {
    pub v: V1,
    pub command: CommandId,
    pub key: IdempotencyKey,
    pub binding: Binding,
    pub admitted_at: Millis,
    /// The uncertain command this one deliberately runs again (a user's
    /// re-issue). Recorded in the admission itself, so no crash can leave a
    /// re-issue unlinked. Absent in journals from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reissue_of: Option<CommandId>,
}

impl Schema for CommandRecord {
    const NAME: &'static str = "command record";
    fn validate(&self) -> Result<(), String> {
        self.binding.validate()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn id<T: core::str::FromStr>(n: u128) -> T
    where
        T::Err: fmt::Debug,
    {
        let v = n.max(1);
        let mut text = [b'0'; 26];
        let alphabet = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        let mut x = v;
        for slot in text.iter_mut().rev() {
            *slot = alphabet[(x & 31) as usize];
            x >>= 5;
        }
        core::str::from_utf8(&text).unwrap().parse().unwrap()
    }

    pub(crate) fn binding() -> Binding {
        Binding {
            workspace: id(1),
            lease: id(2),
            generation: Generation(1),
            runtime: id(3),
            session: id(4),
            working_directory: "/".into(),
            capabilities: ["fs.read".to_string()].into_iter().collect(),
            budget: Budget {
                deadline: Millis(60_000),
                max_output_bytes: 1 << 20,
            },
            command_line: "echo hi".into(),
        }
    }

    #[test]
    fn differences_name_every_changed_field() {
        let a = binding();
        assert!(a.differences(&a).is_empty());
        let mut b = a.clone();
        b.working_directory = "/src".into();
        b.budget.deadline = Millis(1);
        assert_eq!(
            a.differences(&b),
            vec![BindingField::WorkingDirectory, BindingField::Deadline]
        );
        let err = BindingMismatch {
            key: id(9),
            existing: id(10),
            fields: a.differences(&b),
        };
        assert!(err
            .to_string()
            .contains("with a different working directory, budget deadline"));
    }

    #[test]
    fn validation_rejects_bad_bindings() {
        let mut b = binding();
        b.working_directory = "src".into();
        assert!(b.validate().is_err());
        let mut b = binding();
        b.working_directory = "/a/../b".into();
        assert!(b.validate().is_err());
        let mut b = binding();
        b.capabilities.insert("Bad Cap".into());
        assert!(b.validate().is_err());
        let mut b = binding();
        b.command_line = "   ".into();
        assert!(b.validate().is_err());
        let mut b = binding();
        b.generation = Generation(0);
        assert!(b.validate().is_err());
        assert!(binding().validate().is_ok());
    }
}
