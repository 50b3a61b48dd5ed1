//! Filling a text's parameters; numbers and sizes per locale.

use crate::Locale;

/// Fills `{0}`…`{9}` in `template` with `args`; anything else is kept.
pub fn fill(template: &str, args: &[&str]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.as_bytes() {
            [d @ b'0'..=b'9', b'}', ..] => {
                out.push_str(args.get(usize::from(d - b'0')).copied().unwrap_or_default());
                rest = &after[2..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Decimal units, one decimal place, the locale's decimal mark: `1.2 MB`,
/// `1,2 MB`.
pub fn bytes(locale: Locale, n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} B");
    }
    // Tenths in integer arithmetic, rounded (float formatting costs the UI's
    // wasm budget several KB).
    let (mut div, mut unit) = (1u64, 0);
    while n / div >= 1000 && unit < UNITS.len() - 1 {
        div *= 1000;
        unit += 1;
    }
    let tenths = (u128::from(n) * 10 + u128::from(div / 2)) / u128::from(div);
    let mark = if locale == Locale::De { ',' } else { '.' };
    format!("{}{mark}{} {}", tenths / 10, tenths % 10, UNITS[unit])
}

/// A whole number with the locale's digit grouping: `12,345`, `12.345`.
pub fn num(locale: Locale, n: u64) -> String {
    let digits = n.to_string();
    let sep = if locale == Locale::De { '.' } else { ',' };
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(sep);
        }
        out.push(c);
    }
    out
}

/// FNV-1a, 32 bits, at compile time: a catalog's key list as one number, so
/// a German asset written for another key list is refused. xtask computes
/// the same over the same names.
pub const fn fnv1a(bytes: &[u8]) -> u32 {
    let mut hash = 0x811c_9dc5_u32;
    let mut i = 0;
    while i < bytes.len() {
        hash = (hash ^ bytes[i] as u32).wrapping_mul(0x0100_0193);
        i += 1;
    }
    hash
}
