//! The built-in commands. Messages and exit statuses follow GNU coreutils
//! and grep, because that is what people and models already expect.

use crate::io::{Abort, Io};
use crate::limits::{MAX_FILE_LEN, MAX_TREE_ENTRIES};
use crate::opts::{opts, opts_or_return};
use crate::{EntryKind, FsError, Host, WorkspacePath};
use sha2::{Digest, Sha256};

/// Every built-in, sorted; listed when a command is not found.
pub const BUILTINS: &[&str] = &[
    "cat",
    "cp",
    "echo",
    "env",
    "false",
    "grep",
    "head",
    "js",
    "ls",
    "mkdir",
    "mv",
    "pwd",
    "rm",
    "seq",
    "sha256sum",
    "sleep",
    "tail",
    "touch",
    "true",
    "wc",
];

pub(crate) async fn dispatch<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let rest = &args[1..];
    match args[0].as_str() {
        "cat" => cat(io, rest).await,
        "cp" => cp(io, rest).await,
        "echo" => echo(io, rest).await,
        "env" => env(io, rest).await,
        "false" => Ok(1),
        "grep" => crate::text::grep(io, rest).await,
        "head" => crate::text::head_tail(io, rest, true).await,
        "js" => js(io, rest).await,
        "ls" => ls(io, rest).await,
        "mkdir" => mkdir(io, rest).await,
        "mv" => mv(io, rest).await,
        "pwd" => {
            let line = format!("{}\n", io.ctx.cwd);
            io.out_str(&line).await?;
            Ok(0)
        }
        "rm" => rm(io, rest).await,
        "seq" => crate::text::seq(io, rest).await,
        "sha256sum" => sha256sum(io, rest).await,
        "sleep" => sleep(io, rest).await,
        "tail" => crate::text::head_tail(io, rest, false).await,
        "touch" => touch(io, rest).await,
        "true" => Ok(0),
        "wc" => crate::text::wc(io, rest).await,
        name => {
            let name = name.to_string();
            io.shell_err(&format!("{name}: command not found"));
            io.shell_err(&format!("built-in commands: {}", BUILTINS.join(" ")));
            Ok(127)
        }
    }
}

async fn echo<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let mut rest = args;
    let mut newline = true;
    while let Some(first) = rest.first() {
        if first.len() >= 2 && first.starts_with('-') && first[1..].chars().all(|c| c == 'n') {
            newline = false;
            rest = &rest[1..];
        } else {
            break;
        }
    }
    let mut line = rest.join(" ");
    if newline {
        line.push('\n');
    }
    io.out_str(&line).await?;
    Ok(0)
}

async fn cat<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let parsed = opts_or_return!(io, args, "", "", "cat [FILE]...", 1);
    let mut operands = parsed.operands;
    if operands.is_empty() {
        operands.push("-".into());
    }
    let mut status = 0;
    for operand in &operands {
        match io.read_operand(operand).await {
            Ok(data) => io.out(&data).await?,
            Err(error) => {
                io.file_err(operand, &error);
                status = 1;
            }
        }
    }
    Ok(status)
}

async fn ls<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let parsed = opts_or_return!(io, args, "a1", "", "ls [-a] [-1] [PATH]...", 2);
    let all = parsed.has('a');
    let mut operands = parsed.operands;
    if operands.is_empty() {
        operands.push(".".into());
    }
    let many = operands.len() > 1;
    let mut status = 0;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for operand in &operands {
        let kind = match io.resolve(operand) {
            Ok(path) => io.host.kind(&path).await.map(|kind| (path, kind)),
            Err(error) => Err(error),
        };
        match kind {
            Ok((_, Some(EntryKind::File))) => files.push(operand.clone()),
            Ok((path, Some(EntryKind::Directory))) => dirs.push((operand.clone(), path)),
            Ok((_, None)) => {
                io.err(&format!("cannot access '{operand}': {}", FsError::NotFound));
                status = 2;
            }
            Err(error) => {
                io.err(&format!("cannot access '{operand}': {error}"));
                status = 2;
            }
        }
    }
    files.sort();
    dirs.sort();
    let mut text = String::new();
    for file in &files {
        text.push_str(file);
        text.push('\n');
    }
    let mut first_group = files.is_empty();
    for (operand, path) in &dirs {
        let mut names = match io.host.list(path).await {
            Ok(entries) => entries
                .into_iter()
                .map(|entry| entry.name)
                .collect::<Vec<_>>(),
            Err(error) => {
                io.out_str(&std::mem::take(&mut text)).await?;
                io.err(&format!("cannot open directory '{operand}': {error}"));
                status = 2;
                continue;
            }
        };
        if !all {
            names.retain(|name| !name.starts_with('.'));
        } else {
            names.push(".".into());
            names.push("..".into());
        }
        names.sort();
        if !first_group {
            text.push('\n');
        }
        first_group = false;
        if many {
            text.push_str(operand);
            text.push_str(":\n");
        }
        for name in names {
            text.push_str(&name);
            text.push('\n');
            if text.len() >= 16 * 1024 {
                io.out_str(&std::mem::take(&mut text)).await?;
            }
        }
    }
    io.out_str(&text).await?;
    Ok(status)
}

async fn mkdir<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let parsed = opts_or_return!(io, args, "p", "", "mkdir [-p] DIRECTORY...", 1);
    if parsed.operands.is_empty() {
        io.err("missing operand");
        return Ok(1);
    }
    let parents = parsed.has('p');
    let mut status = 0;
    for operand in &parsed.operands {
        let result = match io.resolve(operand) {
            Ok(path) if parents => make_parents(io.host, &path).await,
            Ok(path) => io.host.create_dir(&path).await,
            Err(error) => Err(error),
        };
        if let Err(error) = result {
            io.err(&format!("cannot create directory '{operand}': {error}"));
            status = 1;
        }
    }
    Ok(status)
}

/// `mkdir -p`: creates each missing directory from the root down; an
/// existing directory is fine, an existing file is not.
async fn make_parents<H: Host>(host: &H, path: &WorkspacePath) -> Result<(), FsError> {
    let mut current = WorkspacePath::root();
    let names: Vec<&str> = path.components().collect();
    let count = names.len();
    for (index, name) in names.into_iter().enumerate() {
        current = current.join(name)?;
        match host.kind(&current).await? {
            Some(EntryKind::Directory) => {}
            Some(EntryKind::File) if index + 1 == count => return Err(FsError::AlreadyExists),
            Some(EntryKind::File) => return Err(FsError::NotADirectory),
            None => match host.create_dir(&current).await {
                Ok(()) | Err(FsError::AlreadyExists) => {}
                Err(error) => return Err(error),
            },
        }
    }
    Ok(())
}

/// Whether the operand's last component is `.` or `..`, which GNU rm refuses.
fn is_dot_operand(operand: &str) -> bool {
    let trimmed = operand.trim_end_matches('/');
    let last = trimmed.rsplit('/').next().unwrap_or("");
    !trimmed.is_empty() && (last == "." || last == "..")
}

async fn rm<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let parsed = opts_or_return!(io, args, "rRf", "", "rm [-r] [-f] PATH...", 1);
    let recursive = parsed.has('r') || parsed.has('R');
    let force = parsed.has('f');
    if parsed.operands.is_empty() {
        if force {
            return Ok(0);
        }
        io.err("missing operand");
        return Ok(1);
    }
    let mut status = 0;
    for operand in &parsed.operands {
        if is_dot_operand(operand) {
            io.err(&format!(
                "refusing to remove '.' or '..' directory: skipping '{operand}'"
            ));
            status = 1;
            continue;
        }
        let path = match io.resolve(operand) {
            Ok(path) => path,
            Err(FsError::NotFound) if force => continue,
            Err(error) => {
                io.err(&format!("cannot remove '{operand}': {error}"));
                status = 1;
                continue;
            }
        };
        if path.is_root() {
            io.err(&format!(
                "refusing to remove the workspace root '{operand}'"
            ));
            status = 1;
            continue;
        }
        let outcome = match io.host.kind(&path).await {
            Ok(None) if force => Ok(()),
            Ok(None) => Err(FsError::NotFound),
            Ok(Some(EntryKind::Directory)) if !recursive => Err(FsError::IsADirectory),
            Ok(Some(_)) => io.host.remove(&path, recursive).await,
            Err(error) => Err(error),
        };
        if let Err(error) = outcome {
            io.err(&format!("cannot remove '{operand}': {error}"));
            status = 1;
        }
    }
    Ok(status)
}

async fn touch<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let parsed = opts_or_return!(io, args, "", "", "touch FILE...", 1);
    if parsed.operands.is_empty() {
        io.err("missing file operand");
        return Ok(1);
    }
    let mut status = 0;
    for operand in &parsed.operands {
        let outcome = match io.resolve(operand) {
            Ok(path) => match io.host.kind(&path).await {
                Ok(Some(_)) => Ok(()),
                // Appending nothing creates the file without touching content.
                Ok(None) => io.host.write(&path, &[], true).await,
                Err(error) => Err(error),
            },
            Err(error) => Err(error),
        };
        if let Err(error) = outcome {
            io.err(&format!("cannot touch '{operand}': {error}"));
            status = 1;
        }
    }
    Ok(status)
}

/// A resolved source or destination with how the user wrote it.
struct Named {
    path: WorkspacePath,
    shown: String,
}

/// Shared operand handling of `cp` and `mv`: the sources and, for each, the
/// final destination (inside the target when the target is a directory).
async fn sources_and_targets<H: Host>(
    io: &mut Io<'_, H>,
    operands: &[String],
) -> Result<Vec<(Named, EntryKind, Named)>, i32> {
    match operands.len() {
        0 => {
            io.err("missing file operand");
            return Err(1);
        }
        1 => {
            io.err(&format!(
                "missing destination file operand after '{}'",
                operands[0]
            ));
            return Err(1);
        }
        _ => {}
    }
    let (target_operand, sources) = operands.split_last().expect("two or more operands");
    let target = match io.resolve(target_operand) {
        Ok(path) => path,
        Err(error) => {
            io.err(&format!("'{target_operand}': {error}"));
            return Err(1);
        }
    };
    let target_is_dir = match io.host.kind(&target).await {
        Ok(kind) => kind == Some(EntryKind::Directory),
        Err(error) => {
            io.err(&format!("'{target_operand}': {error}"));
            return Err(1);
        }
    };
    if sources.len() > 1 && !target_is_dir {
        io.err(&format!("target '{target_operand}' is not a directory"));
        return Err(1);
    }
    let mut plan = Vec::new();
    let mut status = 0;
    for operand in sources {
        let source = match io.resolve(operand) {
            Ok(path) => path,
            Err(error) => {
                io.err(&format!("cannot stat '{operand}': {error}"));
                status = 1;
                continue;
            }
        };
        let kind = match io.host.kind(&source).await {
            Ok(Some(kind)) => kind,
            Ok(None) => {
                io.err(&format!("cannot stat '{operand}': {}", FsError::NotFound));
                status = 1;
                continue;
            }
            Err(error) => {
                io.err(&format!("cannot stat '{operand}': {error}"));
                status = 1;
                continue;
            }
        };
        let destination = if target_is_dir {
            let Some(name) = source.name() else {
                io.err(&format!(
                    "cannot copy or move the workspace root '{operand}'"
                ));
                status = 1;
                continue;
            };
            match target.join(name) {
                Ok(path) => Named {
                    shown: format!("{}/{name}", target_operand.trim_end_matches('/')),
                    path,
                },
                Err(error) => {
                    io.err(&format!("'{target_operand}': {error}"));
                    status = 1;
                    continue;
                }
            }
        } else {
            Named {
                path: target.clone(),
                shown: target_operand.clone(),
            }
        };
        plan.push((
            Named {
                path: source,
                shown: operand.clone(),
            },
            kind,
            destination,
        ));
    }
    if plan.is_empty() && status != 0 {
        return Err(status);
    }
    Ok(plan)
}

/// Copies a file or a whole tree with the host's primitives. Iterative, with
/// a bound on the number of entries, so a deep or huge tree cannot blow the
/// stack or run unbounded.
async fn copy_tree<H: Host>(
    io: &mut Io<'_, H>,
    source: &Named,
    kind: EntryKind,
    destination: &Named,
) -> Result<Result<(), String>, Abort> {
    if kind == EntryKind::File {
        return Ok(copy_file(io.host, &source.path, &destination.path, &destination.shown).await);
    }
    let mut work = vec![(source.path.clone(), destination.path.clone())];
    let mut entries = 0usize;
    while let Some((from, to)) = work.pop() {
        match io.host.kind(&to).await {
            Ok(None) => {
                if let Err(error) = io.host.create_dir(&to).await {
                    return Ok(Err(format!("cannot create directory '{to}': {error}")));
                }
            }
            Ok(Some(EntryKind::Directory)) => {}
            Ok(Some(EntryKind::File)) => {
                return Ok(Err(format!(
                    "cannot overwrite non-directory '{to}' with directory '{from}'"
                )))
            }
            Err(error) => return Ok(Err(format!("'{to}': {error}"))),
        }
        let listing = match io.host.list(&from).await {
            Ok(listing) => listing,
            Err(error) => return Ok(Err(format!("cannot read directory '{from}': {error}"))),
        };
        for entry in listing {
            entries += 1;
            if entries > MAX_TREE_ENTRIES {
                return Ok(Err(format!(
                    "'{}': more than {MAX_TREE_ENTRIES} entries; copy smaller parts",
                    source.shown
                )));
            }
            io.tick().await?;
            let (child_from, child_to) = match (from.join(&entry.name), to.join(&entry.name)) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(error), _) | (_, Err(error)) => {
                    return Ok(Err(format!("'{from}/{}': {error}", entry.name)))
                }
            };
            match entry.kind {
                EntryKind::Directory => work.push((child_from, child_to)),
                EntryKind::File => {
                    let shown = child_to.to_string();
                    if let Err(message) = copy_file(io.host, &child_from, &child_to, &shown).await {
                        return Ok(Err(message));
                    }
                }
            }
        }
    }
    Ok(Ok(()))
}

async fn copy_file<H: Host>(
    host: &H,
    from: &WorkspacePath,
    to: &WorkspacePath,
    shown: &str,
) -> Result<(), String> {
    if host.kind(to).await == Ok(Some(EntryKind::Directory)) {
        return Err(format!(
            "cannot overwrite directory '{shown}' with non-directory"
        ));
    }
    let data = match host.read(from, MAX_FILE_LEN).await {
        Ok(data) => data,
        Err(FsError::TooLarge) => {
            return Err(format!(
                "'{from}': File too large (the shell copies at most {} MiB)",
                MAX_FILE_LEN >> 20
            ))
        }
        Err(error) => return Err(format!("cannot open '{from}' for reading: {error}")),
    };
    host.write(to, &data, false)
        .await
        .map_err(|error| format!("cannot create regular file '{shown}': {error}"))
}

async fn cp<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let parsed = opts_or_return!(io, args, "rR", "", "cp [-r] SOURCE... DESTINATION", 1);
    let recursive = parsed.has('r') || parsed.has('R');
    let plan = match sources_and_targets(io, &parsed.operands).await {
        Ok(plan) => plan,
        Err(status) => return Ok(status),
    };
    let mut status = 0;
    for (source, kind, destination) in &plan {
        if *kind == EntryKind::Directory && !recursive {
            io.err(&format!(
                "-r not specified; omitting directory '{}'",
                source.shown
            ));
            status = 1;
            continue;
        }
        if source.path == destination.path {
            io.err(&format!(
                "'{}' and '{}' are the same file",
                source.shown, destination.shown
            ));
            status = 1;
            continue;
        }
        if *kind == EntryKind::Directory && destination.path.is_within(&source.path) {
            io.err(&format!(
                "cannot copy a directory, '{}', into itself, '{}'",
                source.shown, destination.shown
            ));
            status = 1;
            continue;
        }
        if let Err(message) = copy_tree(io, source, *kind, destination).await? {
            io.err(&message);
            status = 1;
        }
    }
    Ok(status)
}

/// `mv` is a copy followed by a delete (the host has no rename). Interrupted
/// half-way it can leave both copies, never neither.
async fn mv<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let parsed = opts_or_return!(io, args, "", "", "mv SOURCE... DESTINATION", 1);
    let plan = match sources_and_targets(io, &parsed.operands).await {
        Ok(plan) => plan,
        Err(status) => return Ok(status),
    };
    let mut status = 0;
    for (source, kind, destination) in &plan {
        let problem = if source.path.is_root() {
            Some(format!("cannot move the workspace root '{}'", source.shown))
        } else if source.path == destination.path {
            Some(format!(
                "'{}' and '{}' are the same file",
                source.shown, destination.shown
            ))
        } else if *kind == EntryKind::Directory && destination.path.is_within(&source.path) {
            Some(format!(
                "cannot move '{}' to a subdirectory of itself, '{}'",
                source.shown, destination.shown
            ))
        } else if io.ctx.cwd.is_within(&source.path) {
            Some(format!(
                "cannot move '{}': it contains the working directory",
                source.shown
            ))
        } else {
            match (io.host.kind(&destination.path).await, kind) {
                (Err(error), _) => Some(format!("'{}': {error}", destination.shown)),
                (Ok(Some(EntryKind::Directory)), EntryKind::File) => Some(format!(
                    "cannot overwrite directory '{}' with non-directory",
                    destination.shown
                )),
                (Ok(Some(EntryKind::File)), EntryKind::Directory) => Some(format!(
                    "cannot overwrite non-directory '{}' with directory '{}'",
                    destination.shown, source.shown
                )),
                (Ok(Some(EntryKind::Directory)), EntryKind::Directory) => {
                    match io.host.list(&destination.path).await {
                        Ok(entries) if entries.is_empty() => None,
                        Ok(_) => Some(format!(
                            "cannot move '{}' to '{}': {}",
                            source.shown,
                            destination.shown,
                            FsError::NotEmpty
                        )),
                        Err(error) => Some(format!("'{}': {error}", destination.shown)),
                    }
                }
                _ => None,
            }
        };
        if let Some(problem) = problem {
            io.err(&problem);
            status = 1;
            continue;
        }
        if let Err(message) = copy_tree(io, source, *kind, destination).await? {
            io.err(&message);
            status = 1;
            continue;
        }
        if let Err(error) = io.host.remove(&source.path, true).await {
            io.err(&format!("cannot remove '{}': {error}", source.shown));
            status = 1;
        }
    }
    Ok(status)
}

async fn sleep<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    if args.is_empty() {
        io.err("missing operand");
        return Ok(1);
    }
    let mut total_us = 0u64;
    for arg in args {
        match interval_us(arg) {
            Some(us) => total_us = total_us.saturating_add(us),
            None => {
                io.err(&format!("invalid time interval '{arg}'"));
                return Ok(1);
            }
        }
    }
    io.flush().await?;
    // Rounded to the millisecond; the host splits waits longer than its
    // timer allows.
    io.host.sleep(total_us.saturating_add(500) / 1000).await;
    Ok(0)
}

/// `1.5`, `2s`, `0.5m`, `1h`, `1d` in microseconds (saturating), computed
/// in decimal: digits past the microsecond do not count.
fn interval_us(text: &str) -> Option<u64> {
    let (number, unit_us): (&str, u128) = match text.char_indices().last()? {
        (at, 's') => (&text[..at], 1_000_000),
        (at, 'm') => (&text[..at], 60_000_000),
        (at, 'h') => (&text[..at], 3_600_000_000),
        (at, 'd') => (&text[..at], 86_400_000_000),
        _ => (text, 1_000_000),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |part: &str| part.chars().all(|c| c.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !digits(whole) || !digits(fraction) {
        return None;
    }
    let mut us: u128 = 0;
    for c in whole.chars() {
        us = us
            .saturating_mul(10)
            .saturating_add(u128::from(c.to_digit(10)?));
    }
    us = us.saturating_mul(unit_us);
    // Each decimal is worth a tenth of the one before it; those worth less
    // than a microsecond add nothing.
    let mut place = unit_us;
    for c in fraction.chars().take(12) {
        place /= 10;
        us = us.saturating_add(place * u128::from(c.to_digit(10)?));
    }
    Some(u64::try_from(us).unwrap_or(u64::MAX))
}

async fn env<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    if !args.is_empty() {
        io.err("running a command through env is not supported; use plain `env` to list");
        return Ok(125);
    }
    let mut text = String::new();
    for (name, value) in io.ctx.env.iter() {
        text.push_str(name);
        text.push('=');
        text.push_str(value);
        text.push('\n');
    }
    io.out_str(&text).await?;
    Ok(0)
}

async fn sha256sum<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    let parsed = opts_or_return!(io, args, "", "", "sha256sum [FILE]...", 1);
    let mut operands = parsed.operands;
    if operands.is_empty() {
        operands.push("-".into());
    }
    let mut status = 0;
    for operand in &operands {
        let data = match io.read_operand(operand).await {
            Ok(data) => data,
            Err(error) => {
                io.file_err(operand, &error);
                status = 1;
                continue;
            }
        };
        let mut hasher = Sha256::new();
        for piece in data.chunks(1 << 20) {
            hasher.update(piece);
            io.host.yield_now().await;
        }
        let mut line = String::with_capacity(70 + operand.len());
        for byte in hasher.finalize() {
            line.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
            line.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
        }
        line.push_str("  ");
        line.push_str(operand);
        line.push('\n');
        io.out_str(&line).await?;
    }
    Ok(status)
}

async fn js<H: Host>(io: &mut Io<'_, H>, args: &[String]) -> Result<i32, Abort> {
    if !io.ctx.capabilities.iter().any(|c| c == "js") {
        io.err("not allowed by this profile's capabilities");
        return Ok(126);
    }
    if args.is_empty() {
        io.err("missing source");
        io.raw_err("usage: js SOURCE...");
        return Ok(2);
    }
    let source = args.join(" ");
    io.flush().await?;
    match io.host.eval_js(&source).await {
        Ok(value) => {
            io.out_str(&format!("{value}\n")).await?;
            Ok(0)
        }
        Err(message) => {
            io.err(&message);
            Ok(1)
        }
    }
}
