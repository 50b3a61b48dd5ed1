//! Random command lines never panic the shell.

mod common;

use common::{poll_at_most, MemHost};
use lifeline_shell::{run, Context};
use proptest::prelude::*;

fn line() -> impl Strategy<Value = String> {
    let pieces = prop::collection::vec(
        prop_oneof![
            Just("echo".to_string()),
            Just("cat".to_string()),
            Just("ls".to_string()),
            Just("grep".to_string()),
            Just("seq".to_string()),
            Just("head".to_string()),
            Just("tail".to_string()),
            Just("wc".to_string()),
            Just("cp".to_string()),
            Just("mv".to_string()),
            Just("rm".to_string()),
            Just("mkdir".to_string()),
            Just("touch".to_string()),
            Just("sleep".to_string()),
            Just("sha256sum".to_string()),
            Just("js".to_string()),
            Just("env".to_string()),
            Just("-r".to_string()),
            Just("-n".to_string()),
            Just("-p".to_string()),
            Just("f".to_string()),
            Just("d/e".to_string()),
            Just("..".to_string()),
            Just("|".to_string()),
            Just("&&".to_string()),
            Just("||".to_string()),
            Just(";".to_string()),
            Just(">".to_string()),
            Just(">>".to_string()),
            Just("<".to_string()),
            Just("$X".to_string()),
            Just("${".to_string()),
            Just("'".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("#".to_string()),
            "[ -~]{0,6}",
            "\\PC{0,3}",
        ],
        0..14,
    );
    pieces.prop_map(|pieces| pieces.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_lines_never_panic(line in line(), raw in "\\PC{0,40}") {
        let host = MemHost::new();
        host.file("/f", "one\ntwo\n").file("/d/e", "x");
        let mut ctx = Context::default();
        ctx.env.insert("X".into(), "a b".into());
        ctx.capabilities.push("js".into());
        for text in [line.as_str(), raw.as_str()] {
            let mut out = |_: lifeline_shell::Stream, _: &str| {};
            // Endless commands (`seq 1 99999999999`) are cancelled by dropping.
            let _ = poll_at_most(run(&host, text, &ctx, &mut out), 200);
        }
    }
}
