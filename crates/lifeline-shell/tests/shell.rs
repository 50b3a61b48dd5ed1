//! The shell against an in-memory workspace: language, built-ins, errors,
//! streaming and limits.

mod common;

use common::{poll_at_most, sh, sh_in, MemHost, Node};
use lifeline_shell::{limits, run, Context, Stream, WorkspacePath};

fn ctx_with(env: &[(&str, &str)], caps: &[&str], cwd: &str) -> Context {
    Context {
        cwd: WorkspacePath::parse(cwd).unwrap(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        capabilities: caps.iter().map(|c| c.to_string()).collect(),
    }
}

#[track_caller]
fn ok(host: &MemHost, line: &str) -> String {
    let outcome = sh(host, line);
    assert_eq!(outcome.status, 0, "{line}: {outcome:?}");
    assert_eq!(outcome.stderr, "", "{line}");
    outcome.stdout
}

#[track_caller]
fn fails(host: &MemHost, line: &str, status: i32, stderr: &str) -> String {
    let outcome = sh(host, line);
    assert_eq!(outcome.status, status, "{line}: {outcome:?}");
    assert_eq!(outcome.stderr, stderr, "{line}");
    outcome.stdout
}

// ---- language ----

#[test]
fn quoting_and_escapes() {
    let host = MemHost::new();
    assert_eq!(ok(&host, "echo a   b"), "a b\n");
    assert_eq!(ok(&host, "echo 'a   b' \"c  d\""), "a   b c  d\n");
    assert_eq!(
        ok(&host, r#"echo "say \"hi\" \\ \$HOME \n""#),
        "say \"hi\" \\ $HOME \\n\n"
    );
    assert_eq!(ok(&host, r"echo a\ b \'q\' \$X"), "a b 'q' $X\n");
    assert_eq!(ok(&host, "echo '' x \"\""), " x \n");
    assert_eq!(ok(&host, "echo it'\"s'\"'\"mixed"), "it\"s'mixed\n");
    assert_eq!(ok(&host, "echo -n no newline"), "no newline");
    assert_eq!(ok(&host, "echo -nn -x"), "-x");
    assert_eq!(ok(&host, "echo a # a comment | not a pipe"), "a\n");
    assert_eq!(ok(&host, "echo a#b"), "a#b\n");
    assert_eq!(ok(&host, "   # only a comment"), "");
    assert_eq!(ok(&host, ""), "");
}

#[test]
fn variables_expand_outside_single_quotes() {
    let host = MemHost::new();
    let ctx = ctx_with(&[("NAME", "world"), ("SPACED", " a  b ")], &[], "/");
    let run = |line: &str| sh_in(&host, &ctx, line).stdout;
    assert_eq!(run("echo hello $NAME"), "hello world\n");
    assert_eq!(
        run("echo ${NAME}s \"$NAME\" '$NAME'"),
        "worlds world $NAME\n"
    );
    assert_eq!(run("echo [$UNSET] $UNSET x"), "[] x\n");
    assert_eq!(run("echo x${SPACED}y"), "x a b y\n");
    assert_eq!(run("echo \"x${SPACED}y\""), "x a  b y\n");
    assert_eq!(run("echo $ 5$ a$-b"), "$ 5$ a$-b\n");
    assert_eq!(run("false; echo $?; true; echo \"$?\""), "1\n0\n");
    assert_eq!(run("nope; echo $?"), "127\n");
    let bad = sh_in(&host, &ctx, "echo ${1x}");
    assert_eq!(
        (bad.status, bad.stderr.as_str()),
        (2, "lifeline: ${1x}: bad substitution\n")
    );
}

#[test]
fn syntax_errors_exit_2_with_a_clear_message() {
    let host = MemHost::new();
    for (line, message) in [
        ("| echo", "lifeline: syntax error near `|`\n"),
        ("echo a | | b", "lifeline: syntax error near `|`\n"),
        ("echo a &&", "lifeline: syntax error near end of line\n"),
        ("echo a ||  ; b", "lifeline: syntax error near `;`\n"),
        ("; echo", "lifeline: syntax error near `;`\n"),
        ("echo a ;; echo b", "lifeline: syntax error near `;`\n"),
        ("echo >", "lifeline: syntax error near end of line\n"),
        ("echo > | x", "lifeline: syntax error near `|`\n"),
        (
            "echo 'open",
            "lifeline: syntax error: unterminated single quote\n",
        ),
        (
            "echo \"open",
            "lifeline: syntax error: unterminated double quote\n",
        ),
        (
            "sleep 1 &",
            "lifeline: syntax error near `&` (background jobs are not supported)\n",
        ),
        (
            "echo $(ls)",
            "lifeline: command substitution $(...) is not supported\n",
        ),
        (
            "(echo)",
            "lifeline: syntax error near `(` (subshells are not supported)\n",
        ),
    ] {
        let outcome = sh(&host, line);
        assert_eq!(outcome.status, 2, "{line}");
        assert_eq!(outcome.stderr, message, "{line}");
        assert_eq!(
            outcome.stdout, "",
            "{line}: nothing runs before a syntax error"
        );
    }
}

#[test]
fn and_or_and_semicolon_short_circuit() {
    let host = MemHost::new();
    assert_eq!(ok(&host, "true && echo yes"), "yes\n");
    assert_eq!(sh(&host, "false && echo no").stdout, "");
    assert_eq!(sh(&host, "false && echo no").status, 1);
    assert_eq!(ok(&host, "false || echo rescued"), "rescued\n");
    assert_eq!(ok(&host, "true || echo no"), "");
    assert_eq!(
        ok(&host, "false && echo no || echo left-assoc"),
        "left-assoc\n"
    );
    assert_eq!(ok(&host, "false; echo always"), "always\n");
    assert_eq!(ok(&host, "echo a; echo b;"), "a\nb\n");
    assert_eq!(ok(&host, "echo a\necho b"), "a\nb\n");
    let outcome = sh(&host, "cat missing && echo no; echo after");
    assert_eq!(outcome.stdout, "after\n");
    assert_eq!(outcome.status, 0);
    assert_eq!(sh(&host, "echo a; false").status, 1);
}

#[test]
fn redirections_truncate_append_and_read() {
    let host = MemHost::new();
    ok(&host, "echo one > f.txt");
    ok(&host, "echo two > f.txt");
    assert_eq!(host.text("/f.txt"), "two\n");
    ok(&host, "echo three >> f.txt; echo four>>f.txt");
    assert_eq!(host.text("/f.txt"), "two\nthree\nfour\n");
    assert_eq!(ok(&host, "wc -l < f.txt"), "3\n");
    ok(&host, "> empty");
    assert_eq!(host.text("/empty"), "");
    ok(&host, "echo x >> new.txt");
    assert_eq!(host.text("/new.txt"), "x\n");
    // Truncation happens before the command runs, even if it then fails.
    let outcome = sh(&host, "cat nothing > f.txt");
    assert_eq!(outcome.status, 1);
    assert_eq!(host.text("/f.txt"), "");
    host.dir("/d");
    fails(&host, "echo x > d", 1, "lifeline: d: Is a directory\n");
    fails(
        &host,
        "echo x > no/such",
        1,
        "lifeline: no/such: No such file or directory\n",
    );
    fails(
        &host,
        "cat < gone",
        1,
        "lifeline: gone: No such file or directory\n",
    );
    let ctx = ctx_with(&[("TWO", "a b")], &[], "/");
    let outcome = sh_in(&host, &ctx, "echo x > $TWO");
    assert_eq!(
        (outcome.status, outcome.stderr.as_str()),
        (1, "lifeline: $TWO: ambiguous redirect\n")
    );
}

#[test]
fn pipes_feed_each_stage_the_previous_output() {
    let host = MemHost::new();
    host.file("/f", "x\ny\n");
    assert_eq!(ok(&host, "seq 1 20 | grep 1 | wc -l"), "11\n");
    assert_eq!(ok(&host, "echo hi | cat - f"), "hi\nx\ny\n");
    assert_eq!(ok(&host, "cat f | tail -n 1"), "y\n");
    assert_eq!(ok(&host, "echo b | cat > out; cat out"), "b\n");
    // A stage redirected to a file leaves the next stage nothing.
    assert_eq!(ok(&host, "echo a > g | wc -c"), "0\n");
    // The pipeline's status is the last stage's.
    assert_eq!(sh(&host, "false | true").status, 0);
    assert_eq!(sh(&host, "true | false").status, 1);
    // Standard error is not piped.
    let outcome = sh(&host, "cat missing | wc -l");
    assert_eq!(outcome.stdout, "0\n");
    assert_eq!(outcome.stderr, "cat: missing: No such file or directory\n");
}

#[test]
fn a_pipe_buffer_over_the_limit_fails_clearly() {
    let host = MemHost::new();
    host.file("/big", vec![b'a'; limits::MAX_PIPE_BUFFER + 1]);
    let outcome = sh(&host, "cat big | wc -c");
    assert_eq!(outcome.status, 1);
    assert!(
        outcome
            .stderr
            .contains("cat: output into the pipe exceeds the 16 MiB buffer"),
        "{}",
        outcome.stderr
    );
    assert_eq!(outcome.stdout, "");
    host.file("/big", vec![b'a'; limits::MAX_PIPE_BUFFER]);
    assert_eq!(
        ok(&host, "cat big | wc -c"),
        format!("{}\n", limits::MAX_PIPE_BUFFER)
    );
}

#[test]
fn limits_on_the_line_and_its_parts() {
    let host = MemHost::new();
    let long = format!("echo {}", "a".repeat(limits::MAX_LINE_LEN));
    let outcome = sh(&host, &long);
    assert_eq!(outcome.status, 2);
    assert!(outcome
        .stderr
        .starts_with("lifeline: command line too long"));
    let stages = vec!["true"; limits::MAX_STAGES + 1].join(" | ");
    assert!(sh(&host, &stages)
        .stderr
        .contains("too many pipeline stages"));
    let words = format!("echo {}", "a ".repeat(limits::MAX_WORDS));
    assert!(sh(&host, &words).stderr.contains("too many words"));
    host.file("/huge", vec![0u8; limits::MAX_FILE_LEN as usize + 1]);
    fails(
        &host,
        "cat huge",
        1,
        "cat: huge: File too large (the shell reads at most 64 MiB into memory)\n",
    );
    let ctx = ctx_with(
        &[("BIG", &"x".repeat(limits::MAX_ARGS_BYTES / 2 + 1))],
        &[],
        "/",
    );
    let outcome = sh_in(&host, &ctx, "echo $BIG $BIG");
    assert_eq!(outcome.status, 1);
    assert!(outcome.stderr.contains("arguments too long"));
}

// ---- paths ----

#[test]
fn paths_resolve_against_the_working_directory_and_never_escape() {
    let host = MemHost::new();
    host.file("/src/a.txt", "A\n").file("/top.txt", "T\n");
    let ctx = ctx_with(&[], &[], "/src");
    assert_eq!(sh_in(&host, &ctx, "pwd").stdout, "/src\n");
    assert_eq!(
        sh_in(&host, &ctx, "cat a.txt ./a.txt ../top.txt /top.txt").stdout,
        "A\nA\nT\nT\n"
    );
    assert_eq!(sh_in(&host, &ctx, "cat ../src/../src//a.txt").stdout, "A\n");
    let outcome = sh_in(&host, &ctx, "cat ../../top.txt");
    assert_eq!(outcome.status, 1);
    assert_eq!(
        outcome.stderr,
        "cat: ../../top.txt: Path escapes the workspace root\n"
    );
    fails(
        &host,
        "cat /../top.txt",
        1,
        "cat: /../top.txt: Path escapes the workspace root\n",
    );
    fails(
        &host,
        "echo x > ../x",
        1,
        "lifeline: ../x: Path escapes the workspace root\n",
    );
    fails(
        &host,
        "rm -rf ..",
        1,
        "rm: refusing to remove '.' or '..' directory: skipping '..'\n",
    );
    fails(
        &host,
        "ls ..",
        2,
        "ls: cannot access '..': Path escapes the workspace root\n",
    );
    assert_eq!(ok(&host, "ls /src/.."), "src\ntop.txt\n");
}

#[test]
fn workspace_path_basics() {
    let root = WorkspacePath::root();
    let a = root.resolve("a/./b//c/..").unwrap();
    assert_eq!(a.as_str(), "/a/b");
    assert_eq!(a.parent().unwrap().as_str(), "/a");
    assert_eq!(a.name(), Some("b"));
    assert_eq!(root.parent(), None);
    assert!(a.is_within(&root.resolve("a").unwrap()));
    assert!(!root
        .resolve("ab")
        .unwrap()
        .is_within(&root.resolve("a").unwrap()));
    assert!(root.resolve("..").is_err());
    assert!(root.resolve(&"n".repeat(300)).is_err());
    assert_eq!(a.join("x").unwrap().as_str(), "/a/b/x");
    assert!(a.join("..").is_err());
}

// ---- commands ----

#[test]
fn cat_concatenates_and_reports_each_missing_file() {
    let host = MemHost::new();
    host.file("/a", "1\n").file("/b", "2");
    host.dir("/d");
    assert_eq!(ok(&host, "cat a b a"), "1\n21\n");
    let out = fails(
        &host,
        "cat a nope d b",
        1,
        "cat: nope: No such file or directory\ncat: d: Is a directory\n",
    );
    assert_eq!(out, "1\n2");
    fails(&host, "cat a/x", 1, "cat: a/x: Not a directory\n");
    assert_eq!(ok(&host, "cat"), "");
    fails(
        &host,
        "cat -z",
        1,
        "cat: invalid option -- 'z'\nusage: cat [FILE]...\n",
    );
}

#[test]
fn ls_sorts_hides_dotfiles_and_groups_operands() {
    let host = MemHost::new();
    host.file("/b.txt", "")
        .file("/a.txt", "")
        .file("/.hidden", "")
        .file("/dir/z", "")
        .file("/dir/Y", "");
    assert_eq!(ok(&host, "ls"), "a.txt\nb.txt\ndir\n");
    assert_eq!(ok(&host, "ls -a1"), ".\n..\n.hidden\na.txt\nb.txt\ndir\n");
    assert_eq!(ok(&host, "ls dir"), "Y\nz\n");
    assert_eq!(
        ok(&host, "ls dir a.txt ."),
        "a.txt\n\n.:\na.txt\nb.txt\ndir\n\ndir:\nY\nz\n"
    );
    let out = fails(
        &host,
        "ls nope dir",
        2,
        "ls: cannot access 'nope': No such file or directory\n",
    );
    assert_eq!(out, "dir:\nY\nz\n");
    fails(
        &host,
        "ls -l",
        2,
        "ls: invalid option -- 'l'\nusage: ls [-a] [-1] [PATH]...\n",
    );
}

#[test]
fn mkdir_with_and_without_parents() {
    let host = MemHost::new();
    ok(&host, "mkdir a");
    assert_eq!(host.get("/a"), Some(Node::Dir));
    fails(
        &host,
        "mkdir a",
        1,
        "mkdir: cannot create directory 'a': File exists\n",
    );
    fails(
        &host,
        "mkdir x/y",
        1,
        "mkdir: cannot create directory 'x/y': No such file or directory\n",
    );
    ok(&host, "mkdir -p x/y/z a");
    assert_eq!(host.get("/x/y/z"), Some(Node::Dir));
    host.file("/f", "");
    fails(
        &host,
        "mkdir -p f/g",
        1,
        "mkdir: cannot create directory 'f/g': Not a directory\n",
    );
    fails(
        &host,
        "mkdir -p f",
        1,
        "mkdir: cannot create directory 'f': File exists\n",
    );
    fails(&host, "mkdir", 1, "mkdir: missing operand\n");
}

#[test]
fn rm_files_and_trees() {
    let host = MemHost::new();
    host.file("/f", "").file("/d/e/g", "");
    fails(&host, "rm d", 1, "rm: cannot remove 'd': Is a directory\n");
    fails(
        &host,
        "rm nope",
        1,
        "rm: cannot remove 'nope': No such file or directory\n",
    );
    ok(&host, "rm -f nope");
    ok(&host, "rm -f");
    fails(&host, "rm", 1, "rm: missing operand\n");
    ok(&host, "rm f");
    assert_eq!(host.get("/f"), None);
    ok(&host, "rm -r d");
    assert!(host.nodes.borrow().is_empty());
    host.file("/k", "");
    fails(
        &host,
        "rm -rf /",
        1,
        "rm: refusing to remove the workspace root '/'\n",
    );
    fails(
        &host,
        "rm -r .",
        1,
        "rm: refusing to remove '.' or '..' directory: skipping '.'\n",
    );
    assert_eq!(host.get("/k"), Some(Node::File(vec![])));
}

#[test]
fn cp_files_into_directories_and_trees() {
    let host = MemHost::new();
    host.file("/a", "A")
        .file("/t/one", "1")
        .file("/t/sub/two", "2");
    host.dir("/dest");
    ok(&host, "cp a b");
    assert_eq!(host.text("/b"), "A");
    ok(&host, "cp a dest");
    assert_eq!(host.text("/dest/a"), "A");
    ok(&host, "cp a b dest/");
    assert_eq!(host.text("/dest/b"), "A");
    fails(
        &host,
        "cp t u",
        1,
        "cp: -r not specified; omitting directory 't'\n",
    );
    ok(&host, "cp -r t u");
    assert_eq!(host.text("/u/one"), "1");
    assert_eq!(host.text("/u/sub/two"), "2");
    ok(&host, "cp -r t u");
    assert_eq!(host.text("/u/t/sub/two"), "2");
    fails(&host, "cp a a", 1, "cp: 'a' and 'a' are the same file\n");
    fails(
        &host,
        "cp -r t t/sub",
        1,
        "cp: cannot copy a directory, 't', into itself, 't/sub/t'\n",
    );
    fails(
        &host,
        "cp nope x",
        1,
        "cp: cannot stat 'nope': No such file or directory\n",
    );
    fails(&host, "cp a b c", 1, "cp: target 'c' is not a directory\n");
    fails(
        &host,
        "cp a",
        1,
        "cp: missing destination file operand after 'a'\n",
    );
    fails(
        &host,
        "cp a no/dir/x",
        1,
        "cp: cannot create regular file 'no/dir/x': No such file or directory\n",
    );
}

#[test]
fn mv_is_copy_then_delete() {
    let host = MemHost::new();
    host.file("/a", "A")
        .file("/t/one", "1")
        .file("/t/sub/two", "2");
    host.dir("/dest");
    ok(&host, "mv a b");
    assert_eq!((host.get("/a"), host.text("/b")), (None, "A".into()));
    ok(&host, "mv b dest");
    assert_eq!(host.text("/dest/b"), "A");
    ok(&host, "mv t dest/t2");
    assert_eq!(host.get("/t"), None);
    assert_eq!(host.text("/dest/t2/sub/two"), "2");
    fails(
        &host,
        "mv dest dest/t2",
        1,
        "mv: cannot move 'dest' to a subdirectory of itself, 'dest/t2/dest'\n",
    );
    fails(
        &host,
        "mv nope x",
        1,
        "mv: cannot stat 'nope': No such file or directory\n",
    );
    host.file("/f", "F");
    fails(
        &host,
        "mv dest/t2 f",
        1,
        "mv: cannot overwrite non-directory 'f' with directory 'dest/t2'\n",
    );
    ok(&host, "mv f dest/b");
    assert_eq!(host.text("/dest/b"), "F");
}

#[test]
fn touch_creates_without_changing_content() {
    let host = MemHost::new();
    host.file("/keep", "data");
    ok(&host, "touch new keep");
    assert_eq!(host.text("/new"), "");
    assert_eq!(host.text("/keep"), "data");
    fails(
        &host,
        "touch no/x",
        1,
        "touch: cannot touch 'no/x': No such file or directory\n",
    );
    fails(&host, "touch", 1, "touch: missing file operand\n");
}

#[test]
fn head_and_tail() {
    let host = MemHost::new();
    let lines: String = (1..=15).map(|n| format!("{n}\n")).collect();
    host.file("/f", &lines).file("/short", "a\nb");
    assert_eq!(ok(&host, "head f").lines().count(), 10);
    assert_eq!(ok(&host, "head -n 2 f"), "1\n2\n");
    assert_eq!(ok(&host, "head -3 f"), "1\n2\n3\n");
    assert_eq!(ok(&host, "head -n2 short"), "a\nb");
    assert_eq!(ok(&host, "head -n -13 f"), "1\n2\n");
    assert_eq!(ok(&host, "tail -n 2 f"), "14\n15\n");
    assert_eq!(ok(&host, "tail -1 short"), "b");
    assert_eq!(ok(&host, "tail -n +14 f"), "14\n15\n");
    assert_eq!(ok(&host, "tail f").lines().next(), Some("6"));
    assert_eq!(
        ok(&host, "head -n 1 f short"),
        "==> f <==\n1\n\n==> short <==\na\n"
    );
    assert_eq!(ok(&host, "seq 5 | tail -n 2"), "4\n5\n");
    fails(
        &host,
        "head -n x f",
        1,
        "head: invalid number of lines: 'x'\n",
    );
    fails(
        &host,
        "tail nope",
        1,
        "tail: nope: No such file or directory\n",
    );
}

#[test]
fn wc_matches_gnu_columns() {
    let host = MemHost::new();
    host.file("/f1", "a b\nc\n")
        .file("/f2", "hello world foo\n");
    assert_eq!(ok(&host, "wc f1"), "2 3 6 f1\n");
    assert_eq!(ok(&host, "wc -l f1"), "2 f1\n");
    assert_eq!(
        ok(&host, "wc f1 f2"),
        " 2  3  6 f1\n 1  3 16 f2\n 3  6 22 total\n"
    );
    assert_eq!(ok(&host, "wc -l f1 f2"), " 2 f1\n 1 f2\n 3 total\n");
    assert_eq!(ok(&host, "echo a b | wc"), "      1       2       4\n");
    assert_eq!(ok(&host, "echo a b | wc -l"), "1\n");
    assert_eq!(
        ok(&host, "echo -n x | wc -c - f1"),
        "      1 -\n      6 f1\n      7 total\n"
    );
    assert_eq!(ok(&host, "wc -w -l f2"), " 1  3 f2\n");
    let out = fails(
        &host,
        "wc -l nope f1",
        1,
        "wc: nope: No such file or directory\n",
    );
    assert_eq!(out, "2 f1\n");
}

/// The patterns people and models write for GNU grep, compiled by the
/// host's ECMAScript engine: the same lines match as with GNU grep.
#[test]
fn grep_reads_patterns_as_gnu_grep_does() {
    let host = MemHost::new();
    host.file(
        "/f",
        "aa bb\nabab\nthe then\nother\nx{1}\n2026-12-05\n[tag] \\path\ncaf\u{e9} \u{1f600}\n",
    );
    // A back reference, as in GNU grep.
    assert_eq!(ok(&host, r"grep '\(ab\)\1' f"), "abab\n");
    assert_eq!(ok(&host, r"grep -E '(a)\1 (b)\2' f"), "aa bb\n");
    // `\<` and `\>` are word edges.
    assert_eq!(ok(&host, r"grep '\<the\>' f"), "the then\n");
    assert_eq!(ok(&host, r"grep -c 'the\>' f"), "1\n");
    // Intervals: operators when escaped (basic) or valid (extended).
    assert_eq!(ok(&host, r"grep '[0-9]\{4\}-' f"), "2026-12-05\n");
    assert_eq!(
        ok(&host, "grep -E '^[[:digit:]]{4}(-[[:digit:]]{2}){2}$' f"),
        "2026-12-05\n"
    );
    assert_eq!(ok(&host, "grep 'x{1}' f"), "x{1}\n");
    assert_eq!(ok(&host, "grep -E 'x{' f"), "x{1}\n");
    // A backslash inside brackets is literal; `[` in a bracket too.
    assert_eq!(ok(&host, r"grep '[\]p' f"), "[tag] \\path\n");
    assert_eq!(ok(&host, r"grep -F '[tag] \p' f"), "[tag] \\path\n");
    assert_eq!(ok(&host, "grep '^[[]t' f"), "[tag] \\path\n");
    // A leading `*` is literal; `.` is one character, even outside ASCII.
    assert_eq!(sh(&host, "grep '*a' f").status, 1);
    assert_eq!(ok(&host, "grep -c 'caf. .$' f"), "1\n");
    assert_eq!(ok(&host, "grep -i 'CAF\u{c9}' f"), "caf\u{e9} \u{1f600}\n");
    assert_eq!(ok(&host, "grep -w -c the f"), "1\n");
    // What no engine can read is said, with exit status 2.
    for (line, start) in [
        (
            "grep '[[:nope:]]' f",
            "grep: invalid regular expression '[[:nope:]]': invalid character class",
        ),
        (
            r"grep 'a\{x\}' f",
            "grep: invalid regular expression 'a\\{x\\}': invalid content of \\{\\}",
        ),
        (
            "grep '[abc' f",
            "grep: invalid regular expression '[abc': unmatched [",
        ),
    ] {
        let outcome = sh(&host, line);
        assert_eq!(outcome.status, 2, "{line}");
        assert!(
            outcome.stderr.starts_with(start),
            "{line}: {}",
            outcome.stderr
        );
    }
}

#[test]
fn grep_flags_and_exit_statuses() {
    let host = MemHost::new();
    host.file("/f", "apple\nBanana\ncherry pie\n(paren)\na+b\n")
        .file("/g", "banana split\n");
    assert_eq!(ok(&host, "grep an f"), "Banana\n");
    assert_eq!(ok(&host, "grep -i BAN f g"), "f:Banana\ng:banana split\n");
    assert_eq!(
        ok(&host, "grep -n e f"),
        "1:apple\n3:cherry pie\n4:(paren)\n"
    );
    assert_eq!(ok(&host, "grep -c a f"), "4\n");
    assert_eq!(ok(&host, "grep -v a f"), "cherry pie\n");
    assert_eq!(ok(&host, "grep -q cherry f"), "");
    assert_eq!(ok(&host, "grep -l an f g"), "f\ng\n");
    assert_eq!(ok(&host, "grep -w pie f"), "cherry pie\n");
    // Basic syntax: `+` and `(` are literal; `\|` alternates.
    assert_eq!(ok(&host, "grep 'a+b' f"), "a+b\n");
    assert_eq!(ok(&host, "grep '(paren)' f"), "(paren)\n");
    assert_eq!(ok(&host, r"grep 'apple\|pie' f"), "apple\ncherry pie\n");
    assert_eq!(ok(&host, "grep -E 'apple|pie' f"), "apple\ncherry pie\n");
    assert_eq!(ok(&host, "grep -E '^[[:upper:]]' f"), "Banana\n");
    assert_eq!(ok(&host, "grep -F a+b f"), "a+b\n");
    assert_eq!(ok(&host, "grep -e -x -v f | wc -l"), "5\n");
    assert_eq!(ok(&host, "echo one two | grep two"), "one two\n");
    let none = sh(&host, "grep zebra f");
    assert_eq!(
        (none.status, none.stdout.as_str(), none.stderr.as_str()),
        (1, "", "")
    );
    assert_eq!(sh(&host, "grep -q zebra f").status, 1);
    fails(
        &host,
        "grep a nope",
        2,
        "grep: nope: No such file or directory\n",
    );
    let outcome = sh(&host, "grep -E '(' f");
    assert_eq!(outcome.status, 2);
    assert!(outcome
        .stderr
        .starts_with("grep: invalid regular expression '('"));
    fails(
        &host,
        "grep",
        2,
        "usage: grep [-icnqvlwFE] [-e PATTERN] PATTERN [FILE]...\n",
    );
}

#[test]
fn seq_counts_like_gnu() {
    let host = MemHost::new();
    assert_eq!(ok(&host, "seq 3"), "1\n2\n3\n");
    assert_eq!(ok(&host, "seq 2 4"), "2\n3\n4\n");
    assert_eq!(ok(&host, "seq 10 -3 1"), "10\n7\n4\n1\n");
    assert_eq!(ok(&host, "seq -2 -1"), "-2\n-1\n");
    assert_eq!(ok(&host, "seq 5 1"), "");
    assert_eq!(ok(&host, "seq 0 0.5 1.5"), "0.0\n0.5\n1.0\n1.5\n");
    // Decimal, not binary, arithmetic: the last term is reached exactly.
    assert_eq!(ok(&host, "seq 0 0.1 0.3"), "0.0\n0.1\n0.2\n0.3\n");
    assert_eq!(ok(&host, "seq -1 0.25 -0.5"), "-1.00\n-0.75\n-0.50\n");
    assert_eq!(ok(&host, "seq 1 2.5"), "1\n2\n");
    assert_eq!(ok(&host, "seq 0.05 0.1 0.27"), "0.05\n0.15\n0.25\n");
    assert_eq!(ok(&host, "seq 3 -1.5 0"), "3.0\n1.5\n0.0\n");
    // Across the edge of 64 bits, which are counted in a faster way.
    assert_eq!(
        ok(&host, "seq 18446744073709551614 18446744073709551617"),
        "18446744073709551614\n18446744073709551615\n18446744073709551616\n18446744073709551617\n"
    );
    assert_eq!(
        ok(&host, "seq -18446744073709551616 -18446744073709551615"),
        "-18446744073709551616\n-18446744073709551615\n"
    );
    assert_eq!(
        ok(&host, "seq 1844674407370955161.4 0.1 1844674407370955161.7"),
        "1844674407370955161.4\n1844674407370955161.5\n1844674407370955161.6\n1844674407370955161.7\n"
    );
    assert_eq!(
        ok(
            &host,
            "seq 0.000000000000000000001 0.000000000000000000001 0.000000000000000000002"
        ),
        "0.000000000000000000001\n0.000000000000000000002\n"
    );
    fails(
        &host,
        &format!("seq 1{}", "0".repeat(40)),
        1,
        "seq: argument out of range\n",
    );
    fails(
        &host,
        "seq 1 0 5",
        1,
        "seq: invalid Zero increment value: '0'\n",
    );
    fails(
        &host,
        "seq x",
        1,
        "seq: invalid floating point argument: 'x'\n",
    );
    fails(&host, "seq", 1, "seq: missing operand\n");
}

#[test]
fn sleep_really_asks_the_host_to_wait() {
    let host = MemHost::new();
    ok(&host, "sleep 0.2");
    ok(&host, "sleep 1.5m; sleep 2s 1");
    ok(&host, "sleep 0");
    ok(&host, "sleep .5 0.0004 1.0005");
    ok(&host, "sleep 99999999999999999999999d");
    assert_eq!(
        *host.sleeps.borrow(),
        vec![200, 90_000, 3_000, 0, 1_501, u64::MAX / 1000]
    );
    fails(
        &host,
        "sleep abc",
        1,
        "sleep: invalid time interval 'abc'\n",
    );
    fails(&host, "sleep -1", 1, "sleep: invalid time interval '-1'\n");
    fails(&host, "sleep", 1, "sleep: missing operand\n");
    // Output before a sleep is delivered before the sleep starts.
    let outcome = sh(&host, "echo before; sleep 1; echo after");
    assert_eq!(outcome.chunks.len(), 2);
}

#[test]
fn env_true_false_pwd() {
    let host = MemHost::new();
    let ctx = ctx_with(&[("B", "2"), ("A", "1")], &[], "/");
    assert_eq!(sh_in(&host, &ctx, "env").stdout, "A=1\nB=2\n");
    assert_eq!(sh(&host, "env ls").status, 125);
    assert_eq!(sh(&host, "true").status, 0);
    assert_eq!(sh(&host, "false").status, 1);
    assert_eq!(ok(&host, "pwd"), "/\n");
}

#[test]
fn sha256sum_files_and_stdin() {
    let host = MemHost::new();
    host.file("/abc", "abc");
    let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    assert_eq!(ok(&host, "sha256sum abc"), format!("{abc}  abc\n"));
    assert_eq!(ok(&host, "echo -n abc | sha256sum"), format!("{abc}  -\n"));
    let out = fails(
        &host,
        "sha256sum nope abc",
        1,
        "sha256sum: nope: No such file or directory\n",
    );
    assert_eq!(out, format!("{abc}  abc\n"));
}

#[test]
fn js_is_gated_by_the_capability() {
    let host = MemHost::new();
    fails(
        &host,
        "js 1+1",
        126,
        "js: not allowed by this profile's capabilities\n",
    );
    let ctx = ctx_with(&[], &["js"], "/");
    let outcome = sh_in(&host, &ctx, "js 1 + 1");
    assert_eq!(
        (outcome.status, outcome.stdout.as_str()),
        (0, "evaluated 1 + 1\n")
    );
    let outcome = sh_in(&host, &ctx, "js throw boom");
    assert_eq!((outcome.status, outcome.stderr.as_str()), (1, "js: boom\n"));
}

#[test]
fn unknown_commands_exit_127_and_list_the_builtins() {
    let host = MemHost::new();
    let outcome = sh(&host, "foo bar");
    assert_eq!(outcome.status, 127);
    assert_eq!(
        outcome.stderr,
        "lifeline: foo: command not found\nlifeline: built-in commands: cat cp echo env false grep \
         head js ls mkdir mv pwd rm seq sha256sum sleep tail touch true wc\n"
    );
}

// ---- bytes, streaming, yielding, cancellation ----

#[test]
fn output_is_utf8_and_split_sequences_survive_chunking() {
    let host = MemHost::new();
    let mut data = vec![b'a'; limits::CHUNK - 1];
    data.extend_from_slice("é€".as_bytes());
    host.file("/u", &data).file("/bad", [b'x', 0xff, b'y']);
    let outcome = sh(&host, "cat u");
    assert_eq!(outcome.stdout.as_bytes(), &data[..]);
    assert!(outcome.chunks.len() >= 2);
    assert_eq!(ok(&host, "cat bad"), "x\u{fffd}y");
}

#[test]
fn big_output_streams_in_bounded_chunks_and_yields() {
    let host = MemHost::new();
    let outcome = sh(&host, "seq 1 1000000");
    let total: usize = outcome.chunks.iter().map(|(_, len)| len).sum();
    assert_eq!(total, outcome.stdout.len());
    assert_eq!(outcome.stdout.lines().nth(999_999), Some("1000000"));
    assert!(outcome
        .chunks
        .iter()
        .all(|(s, len)| *s == Stream::Stdout && *len <= limits::CHUNK));
    assert!(outcome.chunks.len() as u64 >= (total / limits::CHUNK) as u64);
    assert!(
        host.yields.get() >= (total / limits::CHUNK) as u64,
        "{}",
        host.yields.get()
    );
}

#[test]
fn cpu_bound_loops_yield_without_output() {
    let host = MemHost::new();
    host.file("/many", "x\n".repeat(100_000));
    assert_eq!(ok(&host, "grep -c x many"), "100000\n");
    assert!(host.yields.get() >= 10, "{}", host.yields.get());
}

#[test]
fn output_arrives_before_the_command_finishes_and_dropping_cancels() {
    let host = MemHost::new();
    let ctx = Context::default();
    let mut seen = 0usize;
    let mut out = |_: Stream, text: &str| seen += text.len();
    // An endless sequence: only cancellation stops it.
    let finished = poll_at_most(run(&host, "seq 1 100000000000", &ctx, &mut out), 50);
    assert!(finished.is_none());
    assert!(seen > 0 && seen <= 50 * limits::CHUNK, "{seen}");
    // A redirect being written when cancelled leaves a partial file behind.
    let finished = poll_at_most(
        run(&host, "seq 1 100000000000 > part", &ctx, &mut |_, _| {}),
        20,
    );
    assert!(finished.is_none());
    match host.get("/part") {
        Some(Node::File(data)) => assert!(!data.is_empty()),
        other => panic!("{other:?}"),
    }
}
