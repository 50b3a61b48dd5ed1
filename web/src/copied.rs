//! What Copy output puts on the clipboard and what its button then says.
//! The core decides what the copy may claim ([`CopyClaim`]); this only
//! assembles the text the page holds and words the claim, so that a copy
//! of part of an output, or of none of it, says so in the text itself
//! (where the reader pastes it) and on the button.

use crate::i18n::{self, Msg};
use lifeline_core::view::CopyClaim;

/// The text of a command block as the page shows it: its command line, the
/// head of its output, and the tail of last lines when the middle is not
/// shown.
pub struct Shown<'a> {
    pub line: &'a str,
    pub head: &'a str,
    pub tail: Option<&'a str>,
}

/// The clipboard text and the button's word once it is written.
pub fn copied(shown: &Shown<'_>, claim: CopyClaim) -> (String, Msg) {
    let mut text = format!("$ {}\n{}", shown.line, shown.head);
    if let Some(tail) = shown.tail {
        text.push_str("[…]\n");
        text.push_str(tail);
    }
    let note = match claim {
        CopyClaim::Whole => return (text, Msg::Copied),
        CopyClaim::OnlyShown => Msg::CopiedOnlyShownNote,
        CopyClaim::StillLoading => Msg::CopiedWhileLoadingNote,
        CopyClaim::Unreadable => Msg::CopiedUnreadableNote,
    };
    text.push_str(&format!("\n[{}]", i18n::now(note)));
    (text, Msg::CopiedOnlyShown)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHOWN: Shown<'static> = Shown {
        line: "cat big.log",
        head: "first\n",
        tail: Some("last\n"),
    };

    #[test]
    fn a_whole_output_is_copied_as_shown_and_says_copied() {
        let bare = Shown {
            tail: None,
            ..SHOWN
        };
        assert_eq!(
            copied(&bare, CopyClaim::Whole),
            ("$ cat big.log\nfirst\n".to_string(), Msg::Copied)
        );
        assert_eq!(
            copied(&SHOWN, CopyClaim::Whole).0,
            "$ cat big.log\nfirst\n[…]\nlast\n"
        );
    }

    #[test]
    fn a_copy_without_all_the_output_says_so_in_the_text_and_on_the_button() {
        for (claim, note) in [
            (CopyClaim::OnlyShown, Msg::CopiedOnlyShownNote),
            (CopyClaim::StillLoading, Msg::CopiedWhileLoadingNote),
            (CopyClaim::Unreadable, Msg::CopiedUnreadableNote),
        ] {
            let (text, said) = copied(&SHOWN, claim);
            assert_eq!(said, Msg::CopiedOnlyShown, "{claim:?}");
            assert!(
                text.starts_with("$ cat big.log\nfirst\n[…]\nlast\n\n["),
                "{text}"
            );
            assert!(text.ends_with(&format!("[{}]", i18n::now(note))), "{text}");
        }
    }
}
