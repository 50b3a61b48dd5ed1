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

fn runs(ansi: &mut Ansi, text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    ansi.feed(text, &mut |style, t| {
        out.push((style.classes(), t.to_string()))
    });
    out
}

fn r(classes: &str, text: &str) -> (String, String) {
    (classes.to_string(), text.to_string())
}

#[test]
fn sgr_becomes_fixed_classes_and_escapes_vanish() {
    let mut ansi = Ansi::new();
    assert_eq!(
        runs(
            &mut ansi,
            "\x1b[31mred\x1b[0m plain \x1b[1;92;44mbold\x1b[22m not\x1b[m\n"
        ),
        vec![
            r("a-f1", "red"),
            r("", " plain "),
            r("a-f10 a-b4 a-bold", "bold"),
            r("a-f10 a-b4", " not"),
            r("", "\n"),
        ]
    );
    assert_eq!(
        runs(
            &mut ansi,
            "\x1b[38;5;3mx\x1b[38;5;200my\x1b[48:5:9mz\x1b[38;2;1;2;3mw\x1b[0m"
        ),
        vec![r("a-f3", "xy"), r("a-f3 a-b9", "zw")]
    );
}

#[test]
fn a_sequence_split_across_chunks_still_applies() {
    let mut ansi = Ansi::new();
    assert_eq!(runs(&mut ansi, "a\x1b[3"), vec![r("", "a")]);
    assert_eq!(runs(&mut ansi, "2mgreen"), vec![r("a-f2", "green")]);
    // The style carries into the next chunk.
    assert_eq!(runs(&mut ansi, "still"), vec![r("a-f2", "still")]);
}

#[test]
fn malformed_and_other_escapes_are_consumed() {
    let mut ansi = Ansi::new();
    let got: String = runs(
        &mut ansi,
        "\x1b[999999999999mA\x1b[2J\x1b[HB\x1b]0;title\x07C\x1b[?25lD\x1bPq#0;2;0;0;0\x1b\\E\x07\x08F\r\n",
    )
    .into_iter()
    .map(|(_, t)| t)
    .collect();
    assert_eq!(got, "ABCDEF\n");
    let mut ansi = Ansi::new();
    let many = format!("\x1b[{}mX", "1;".repeat(200));
    assert_eq!(runs(&mut ansi, &many).concat_text(), "X");
    let mut ansi = Ansi::new();
    assert_eq!(
        runs(&mut ansi, "héllo ✓ 日本").concat_text(),
        "héllo ✓ 日本"
    );
    assert_eq!(runs(&mut ansi, "\x1b[31mé\x1b[0m").concat_text(), "é");
}

trait ConcatText {
    fn concat_text(&self) -> String;
}

impl ConcatText for Vec<(String, String)> {
    fn concat_text(&self) -> String {
        self.iter().map(|(_, t)| t.as_str()).collect()
    }
}
