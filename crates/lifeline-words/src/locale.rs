//! The reader's language.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Locale {
    #[default]
    En,
    De,
}

impl Locale {
    pub const ALL: [Locale; 2] = [Locale::En, Locale::De];

    /// The BCP 47 tag, for `<html lang>` and storage.
    pub fn tag(self) -> &'static str {
        match self {
            Locale::En => "en",
            Locale::De => "de",
        }
    }

    /// The language's own name, the same in every locale.
    pub fn endonym(self) -> &'static str {
        match self {
            Locale::En => "English",
            Locale::De => "Deutsch",
        }
    }

    /// `de`, `de-DE`, `DE-at` → German; `en`, `en-US` → English; else none.
    pub fn from_tag(tag: &str) -> Option<Locale> {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or_default();
        Locale::ALL
            .into_iter()
            .find(|l| primary.eq_ignore_ascii_case(l.tag()))
    }

    /// The first of the browser's preferred languages this page speaks;
    /// English if none.
    pub fn detect<'a>(tags: impl IntoIterator<Item = &'a str>) -> Locale {
        tags.into_iter()
            .find_map(Locale::from_tag)
            .unwrap_or_default()
    }
}
