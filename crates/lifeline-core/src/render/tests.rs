use super::md::*;
use super::*;

fn kinds(steps: &[Md]) -> Vec<u8> {
    steps.iter().map(|m| m.0).collect()
}

/// The text the page would show, tags dropped.
fn text(steps: &[Md]) -> String {
    steps
        .iter()
        .filter(|m| matches!(m.0, TEXT | CODE | CODE_BLOCK))
        .map(|m| m.1.as_str())
        .collect()
}

fn depth_of(steps: &[Md]) -> usize {
    let max = steps.iter().fold((0i32, 0i32), |(d, m), s| match s.0 {
        CLOSE => (d - 1, m),
        k if k >= OPEN_P => (d + 1, m.max(d + 1)),
        _ => (d, m),
    });
    max.1 as usize
}

fn balanced(steps: &[Md]) -> bool {
    let mut depth = 0i32;
    for m in steps {
        match m.0 {
            CLOSE => depth -= 1,
            k if k >= OPEN_P => depth += 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

#[test]
fn markdown_becomes_elements() {
    let steps = markdown(
        "Some **bold** and *em* and `code`.\n\n- one\n- two\n\n```rust\nfn main() {}\n```\n",
    );
    assert!(balanced(&steps));
    assert_eq!(
        kinds(&steps),
        vec![
            OPEN_P,
            TEXT,
            OPEN_STRONG,
            TEXT,
            CLOSE,
            TEXT,
            OPEN_EM,
            TEXT,
            CLOSE,
            TEXT,
            CODE,
            TEXT,
            CLOSE,
            OPEN_LIST,
            OPEN_ITEM,
            TEXT,
            CLOSE,
            OPEN_ITEM,
            TEXT,
            CLOSE,
            CLOSE,
            CODE_BLOCK
        ]
    );
    assert_eq!(steps.last().unwrap().1, "fn main() {}\n");
    let heading = markdown("## Title");
    assert_eq!(heading[0], Md(OPEN_HEADING, "2".into()));
    let ordered = markdown("3. three\n4. four");
    assert_eq!(ordered[0], Md(OPEN_ORDERED, "3".into()));
}

#[test]
fn single_newlines_stay_line_ends() {
    let steps = markdown("ran 2 commands:\n$ echo hi completed");
    assert_eq!(text(&steps), "ran 2 commands:\n$ echo hi completed");
}

#[test]
fn raw_html_is_shown_as_text_never_as_markup() {
    for hostile in [
        "<script>alert(1)</script>",
        "hello <img src=x onerror=alert(1)> there",
        "<div>\n<b>block</b>\n</div>",
        "<!-- comment -->",
    ] {
        let steps = markdown(hostile);
        assert!(balanced(&steps), "{hostile}");
        for m in &steps {
            assert!(matches!(m.0, TEXT | OPEN_P | CLOSE), "{hostile}: {m:?}");
        }
        // Every character the reply had is still visible as text.
        let shown: String = text(&steps).split_whitespace().collect();
        let had: String = hostile.split_whitespace().collect();
        assert_eq!(shown, had, "{hostile}");
    }
}

#[test]
fn only_safe_links_become_links() {
    let steps = markdown(
        "[a](https://example.com/x) [b](javascript:alert(1)) [c](JaVaScRiPt:x) \
         [d](data:text/html,<b>) [e](/relative) [f](mailto:me@example.com) \
         [g](vbscript:x) ![img](http://example.com/i.png) <javascript:alert(1)>",
    );
    let links: Vec<&str> = steps
        .iter()
        .filter(|m| m.0 == OPEN_LINK)
        .map(|m| m.1.as_str())
        .collect();
    assert_eq!(
        links,
        vec![
            "https://example.com/x",
            "mailto:me@example.com",
            "http://example.com/i.png"
        ]
    );
    assert!(balanced(&steps));
    assert!(
        text(&steps).contains('b'),
        "the label of a dropped link stays"
    );
    assert!(!safe_link("https://"));
    assert!(!safe_link("https://a b"));
    assert!(!safe_link("http://x\u{0}y"));
    assert!(safe_link("HTTPS://EXAMPLE.COM"));
}

#[test]
fn hostile_nesting_and_size_stay_bounded() {
    let deep = ">".repeat(5000) + " x";
    let steps = markdown(&deep);
    assert!(balanced(&steps));
    assert!(depth_of(&steps) <= MAX_DEPTH);
    for hostile in [
        "- ".repeat(3000) + "x",
        "1. ".repeat(3000) + "x",
        "> - ".repeat(2000) + "x",
        "*".repeat(50_000),
        "[".repeat(50_000) + "](http://x)",
        "_a ".repeat(50_000),
        "`".repeat(50_000),
        "**a ".repeat(30_000) + "**",
    ] {
        let steps = markdown(&hostile);
        assert!(balanced(&steps));
        assert!(depth_of(&steps) <= MAX_DEPTH, "{}", &hostile[..8]);
    }
    let huge = "*a* ".repeat(100_000);
    let steps = markdown(&huge);
    assert_eq!(kinds(&steps), vec![OPEN_P, TEXT, CLOSE]);
    assert!(markdown("").is_empty());
    // Unclosed constructs close.
    for s in [
        "**open",
        "```\nno end",
        "[link](http://x",
        "> quote\n- item\n  ```",
    ] {
        assert!(balanced(&markdown(s)), "{s}");
    }
}

/// What the page shows for `chunks` received in order: runs of (classes,
/// text), adjacent runs of one style joined.
fn shown(chunks: &[&str]) -> Vec<(String, String)> {
    let mut received = Style::default();
    let mut drawn = Style::default();
    let mut out: Vec<(String, String)> = Vec::new();
    for chunk in chunks {
        let marked = mark_output(chunk);
        let resolved = resolve(&marked, &mut received);
        runs(&resolved, &mut drawn, &mut |style, t| {
            let classes = style.classes();
            match out.last_mut() {
                Some((c, text)) if *c == classes => text.push_str(t),
                _ => out.push((classes, t.to_string())),
            }
        });
    }
    out
}

fn r(classes: &str, text: &str) -> (String, String) {
    (classes.to_string(), text.to_string())
}

fn text_of(runs: &[(String, String)]) -> String {
    runs.iter().map(|(_, t)| t.as_str()).collect()
}

#[test]
fn sgr_becomes_fixed_classes_and_escapes_vanish() {
    assert_eq!(
        shown(&["\x1b[31mred\x1b[0m plain \x1b[1;92;44mbold\x1b[22m not\x1b[m\n"]),
        vec![
            r("a-f1", "red"),
            r("", " plain "),
            r("a-f10 a-b4 a-bold", "bold"),
            r("a-f10 a-b4", " not"),
            r("", "\n"),
        ]
    );
    assert_eq!(
        shown(&["\x1b[38;5;3mx\x1b[38;5;200my\x1b[48:5:9mz\x1b[38;2;1;2;3mw\x1b[0m"]),
        vec![r("a-f3", "xy"), r("a-f3 a-b9", "zw")]
    );
    for (code, class) in [
        ("2", "a-dim"),
        ("3", "a-italic"),
        ("4", "a-under"),
        ("7", "a-inverse"),
        ("9", "a-strike"),
        ("97", "a-f15"),
        ("107", "a-b15"),
    ] {
        assert_eq!(shown(&[&format!("\x1b[{code}mx")]), vec![r(class, "x")]);
    }
}

#[test]
fn the_style_carries_from_chunk_to_chunk() {
    // The controller marks each chunk alone; the page carries the style.
    assert_eq!(
        shown(&["\x1b[31ma", "b\x1b[1m", "c\x1b[39m", "d", "\x1b[0me"]),
        vec![
            r("a-f1", "ab"),
            r("a-f1 a-bold", "c"),
            r("a-bold", "d"),
            r("", "e"),
        ]
    );
    // A chunk that only changes the style still changes it.
    assert_eq!(shown(&["\x1b[32m", "green"]), vec![r("a-f2", "green")]);
}

#[test]
fn a_relative_change_reads_against_the_style_in_force() {
    let marked = mark_output("\x1b[22mx");
    let mut style = Style(BOLD | 2);
    let resolved = resolve(&marked, &mut style);
    assert_eq!(style, Style(2));
    let mut got = Vec::new();
    let mut drawn = Style(BOLD | 2);
    runs(&resolved, &mut drawn, &mut |s, t| {
        got.push((s, t.to_string()))
    });
    assert_eq!(got, vec![(Style(2), "x".to_string())]);
}

#[test]
fn plain_output_passes_unchanged() {
    for s in ["", "hello\n", "héllo ✓ 日本\tx\n", "1\n2\n3\n"] {
        assert_eq!(mark_output(s), s);
        assert_eq!(resolve(s, &mut Style::default()), s);
    }
}

#[test]
fn malformed_and_other_escapes_are_consumed() {
    let got = shown(&[
        "\x1b[999999999999mA\x1b[2J\x1b[HB\x1b]0;title\x07C\x1b[?25lD\x1bPq#0;2;0;0;0\x1b\\E\x07\x08F\r\n",
    ]);
    assert_eq!(text_of(&got), "ABCDEF\n");
    let many = format!("\x1b[{}mX", "1;".repeat(200));
    assert_eq!(text_of(&shown(&[&many])), "X");
    assert_eq!(text_of(&shown(&["\x1b[31mé\x1b[0m"])), "é");
    // A sequence split across chunks is dropped, not half-applied; the
    // text around it stays.
    let split = text_of(&shown(&["a\x1b[3", "2mb"]));
    assert!(split.starts_with('a') && split.ends_with('b'), "{split}");
    assert!(!split.contains('\x1b'));
}

#[test]
fn marks_in_the_output_itself_are_replaced() {
    // Characters the page reads as marks cannot be forged by a command.
    let forged = format!("x{}{}y\x1b[1mz", '\u{F0400}', '\u{100001}');
    let got = shown(&[&forged]);
    assert_eq!(got, vec![r("", "x\u{FFFD}\u{FFFD}y"), r("a-bold", "z")]);
    let plain_forged = format!("x{}y", '\u{10FFFF}');
    assert_eq!(mark_output(&plain_forged), "x\u{FFFD}y");
}

#[test]
fn huge_output_is_marked_in_one_pass() {
    let chunk = "\x1b[31mred\x1b[0m line\n".repeat(100_000);
    let marked = mark_output(&chunk);
    let got = shown(&[&chunk]);
    assert_eq!(got.len(), 200_000);
    assert!(marked.len() < chunk.len() * 2);
}

#[test]
fn marked_markdown_reads_back_as_its_steps() {
    for s in [
        "Some **bold** and *em* and `code`.\n\n- one\n- two\n",
        "# Title\n\n> quote\n\n```\nfn main() {}\n```\n[a](https://x.example)",
        "",
        "plain",
    ] {
        let steps_back: Vec<Md> = steps(&marked_markdown(s))
            .map(|(k, t)| Md(k, t.to_string()))
            .collect();
        assert_eq!(steps_back, markdown(s), "{s}");
    }
    // A reply cannot forge a step.
    let forged = format!("a{}https://x", '\u{F0013}');
    let back: Vec<(u8, String)> = steps(&marked_markdown(&forged))
        .map(|(k, t)| (k, t.to_string()))
        .collect();
    assert_eq!(
        back,
        vec![
            (OPEN_P, String::new()),
            (TEXT, "a\u{FFFD}https://x".to_string()),
            (CLOSE, String::new())
        ]
    );
}
