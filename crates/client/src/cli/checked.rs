//! The readers of option values shared by the global and test-specific
//! option handlers: each reads a value exactly as netperf 2.7.1 does
//! ([`cnum`](super::cnum)) and, where that reading is not what the text
//! says (`3s` read as 3, garbage as 0, a number that wraps), adds one line
//! to the notes the binary prints on stderr. Only what stock netperf itself
//! cannot run is refused, as a [`CliError`] naming the option and the text.

use super::cnum::{self, CRead};
use super::error::{CliError, OptionName};
use super::sizespec::Halves;
use std::fmt::Display;

/// Lines for stderr that say how a value was read (without the program
/// name; the binary adds it).
pub type Notes = Vec<String>;

/// Notes that `text` given to `option` runs as `value`, when the reading
/// was not exact.
pub fn note_if_loose<T: Display>(
    notes: &mut Notes,
    option: OptionName,
    text: &str,
    read: &CRead<T>,
) {
    if !read.exact {
        notes.push(format!(
            "{option} '{text}' is read as {}, as netperf 2.7.1 reads it",
            read.value
        ));
    }
}

/// netperf's `convert()`: a sizespec as an `int`.
pub fn convert(option: OptionName, text: &str, notes: &mut Notes) -> i32 {
    let read = cnum::convert(text);
    note_if_loose(notes, option, text, &read);
    read.value
}

/// C's `atoi()`.
pub fn atoi(option: OptionName, text: &str, notes: &mut Notes) -> i32 {
    let read = cnum::atoi(text);
    note_if_loose(notes, option, text, &read);
    read.value
}

/// C's `strtod()` / `atof()`.
pub fn strtod(option: OptionName, text: &str, notes: &mut Notes) -> f64 {
    let read = cnum::strtod(text);
    note_if_loose(notes, option, text, &read);
    read.value
}

/// netperf's `convert_timespec()`: microseconds.
pub fn timespec(option: OptionName, text: &str, notes: &mut Notes) -> u32 {
    let read = cnum::convert_timespec(text);
    note_if_loose(notes, option, text, &read);
    read.value
}

/// Applies `read` to each non-empty half of a two-value option (netperf
/// leaves a parameter whose half is empty, or both for `""` and `","`).
pub fn pair_of<T>(
    text: &str,
    split: fn(&str) -> Halves<'_>,
    mut read: impl FnMut(&str) -> Result<T, CliError>,
) -> Result<(Option<T>, Option<T>), CliError> {
    let halves = split(text);
    let first = halves.first.map(&mut read).transpose()?;
    let second = halves.second.map(&mut read).transpose()?;
    Ok((first, second))
}

/// `convert()` of each half of a two-value option.
pub fn convert_pair(
    option: OptionName,
    text: &str,
    split: fn(&str) -> Halves<'_>,
    notes: &mut Notes,
) -> (Option<i32>, Option<i32>) {
    let halves = split(text);
    let first = halves.first.map(|half| convert(option, half, notes));
    let second = halves.second.map(|half| convert(option, half, notes));
    (first, second)
}

/// Where netperf-ng stops taking buffer sizes, alignments and offsets
/// from netperf's options: stock netperf 2.7.1 allocates the sum of size,
/// alignment and offset as one `int`, which overflows past 2^31 - 1 and
/// fails the test; this leaves 64 MiB of that for the other two terms.
pub const BUFFER_LIMIT: i32 = i32::MAX - (1 << 26);

/// Where netperf-ng stops taking message sizes (`-m`, `-M`, `-r`) for its
/// own end: stock netperf allocates and fills a ring of such buffers,
/// which from a few hundred megabytes on takes it minutes (or fails).
pub const MESSAGE_LIMIT: i32 = 1 << 28;

/// Refuses a local buffer parameter stock netperf cannot run with: below
/// `min` or at [`BUFFER_LIMIT`] and past it.
pub fn local_buffer(option: OptionName, text: &str, value: i32, min: i32) -> Result<i32, CliError> {
    if value < min || value >= BUFFER_LIMIT {
        return Err(CliError::invalid(
            option,
            text,
            format!(
                "is read as {value}, and netperf 2.7.1 cannot run with it (it allocates buffers of {min} to {} bytes)",
                BUFFER_LIMIT - 1
            ),
        ));
    }
    Ok(value)
}

/// A flag netperf reads as a number and tests for non-zero (`-P`, `-R`).
pub fn truth(option: OptionName, text: &str, number: i32, notes: &mut Notes) -> bool {
    if number != 0 && number != 1 && cnum::atoi(text).exact {
        notes.push(format!(
            "{option} '{text}' is not 0, so it means 1, as netperf 2.7.1 reads it"
        ));
    }
    number != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::error::Section;
    use crate::cli::sizespec::{split_pair, split_pair_explicit};

    const M: OptionName = OptionName {
        letter: 'm',
        section: Section::Test,
    };

    #[test]
    fn loose_readings_leave_a_note() {
        let mut notes = Notes::new();
        assert_eq!(convert(M, "32K", &mut notes), 32768);
        assert!(notes.is_empty());
        assert_eq!(convert(M, "abc", &mut notes), 0);
        assert_eq!(atoi(M, "3s", &mut notes), 3);
        assert_eq!(
            notes,
            [
                "test option -m 'abc' is read as 0, as netperf 2.7.1 reads it",
                "test option -m '3s' is read as 3, as netperf 2.7.1 reads it"
            ]
        );
    }

    #[test]
    fn pairs_leave_empty_halves_alone() {
        let mut notes = Notes::new();
        assert_eq!(convert_pair(M, ",", split_pair, &mut notes), (None, None));
        assert_eq!(
            convert_pair(M, "1,2K", split_pair, &mut notes),
            (Some(1), Some(2048))
        );
        assert_eq!(
            convert_pair(M, "8", split_pair_explicit, &mut notes),
            (Some(8), None)
        );
        assert!(notes.is_empty());
    }

    #[test]
    fn buffers_stock_cannot_allocate_are_refused() {
        assert_eq!(local_buffer(M, "8", 8, 1), Ok(8));
        assert!(local_buffer(M, "0", 0, 1).is_err());
        assert!(local_buffer(M, "3G", -1_073_741_824, 0).is_err());
        assert_eq!(local_buffer(M, "10g", 1_410_065_408, 0), Ok(1_410_065_408));
        assert!(local_buffer(M, "2147483647", i32::MAX, 0).is_err());
    }
}
