//! A getopt(3)-style scanner over one section of netperf's argv: clustered
//! flags (`-cC`), values attached (`-l1`) or separate (`-l 1`), `--` ending
//! the section, and the two kinds of optional value netperf reads by hand
//! after getopt returns (`-c [rate]`, `-k [file]`).
//!
//! Unlike glibc's getopt it does not permute: a word that is not an option
//! is reported where it stands, so the parser can refuse it rather than
//! silently skipping it as netperf does.

/// How an option letter takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// No value (`-d`).
    Flag,
    /// A value, attached or in the next word, whatever it looks like
    /// (`-l -10000` is a value of `-l`, as with getopt).
    Required,
    /// An optional value in the next word when that word starts with a digit
    /// (netperf's `-c [rate]` and `-C [rate]`); only when the letter ends
    /// its cluster, so `-c5` is `-c` followed by an unknown `-5`.
    OptionalNumber,
    /// An optional value in the next word when that word does not start
    /// with `-` (netperf's `-k [file]`, `-o [file]`, `-O [file]`).
    OptionalWord,
}

/// The letters one section accepts and how each takes its value.
pub type OptionTable = [(char, ValueKind)];

/// One step of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    Option {
        letter: char,
        value: Option<&'a str>,
    },
    /// A word that is neither an option nor a value (includes a lone `-`).
    Positional(&'a str),
    /// `--`: the section ends; [`Scanner::rest`] holds what follows.
    EndOfOptions,
}

/// Why the scan stopped, as getopt would report with `?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanError {
    Unknown(char),
    MissingValue(char),
}

/// Whether `word`, an option cluster such as `-m` or `-Dm`, ends in a
/// letter that takes the next word as its value (as getopt reads it).
pub fn wants_next_word(word: &str, table: &OptionTable) -> bool {
    let Some(letters) = word.strip_prefix('-').filter(|l| !l.starts_with('-')) else {
        return false;
    };
    for (i, letter) in letters.char_indices() {
        match table.iter().find(|(known, _)| *known == letter) {
            Some((_, ValueKind::Flag)) => continue,
            Some((_, ValueKind::Required)) => return i + letter.len_utf8() == letters.len(),
            _ => return false,
        }
    }
    false
}

/// Walks `args` one option letter at a time.
pub struct Scanner<'a> {
    args: &'a [String],
    table: &'static OptionTable,
    /// Index of the word being read.
    word: usize,
    /// Byte offset of the next letter inside a cluster; 0 when between words.
    offset_in_word: usize,
    finished: bool,
}

impl<'a> Scanner<'a> {
    pub fn new(args: &'a [String], table: &'static OptionTable) -> Self {
        Scanner {
            args,
            table,
            word: 0,
            offset_in_word: 0,
            finished: false,
        }
    }

    /// The words after the `--` that ended the section (empty if none).
    pub fn rest(&self) -> &'a [String] {
        self.args.get(self.word..).unwrap_or(&[])
    }

    fn kind_of(&self, letter: char) -> Option<ValueKind> {
        self.table
            .iter()
            .find(|(known, _)| *known == letter)
            .map(|(_, kind)| *kind)
    }

    /// Moves past a letter that ends at byte `end` of the current word.
    fn step_past_letter(&mut self, end: usize, word_len: usize) {
        if end >= word_len {
            self.word += 1;
            self.offset_in_word = 0;
        } else {
            self.offset_in_word = end;
        }
    }

    /// The next word, if `accepts` likes it, consumed as an optional value.
    fn take_optional_word(&mut self, accepts: fn(&str) -> bool) -> Option<&'a str> {
        let candidate = self.args.get(self.word)?;
        if accepts(candidate) {
            self.word += 1;
            Some(candidate.as_str())
        } else {
            None
        }
    }

    fn scan_letter(&mut self, word_text: &'a str) -> Result<Item<'a>, ScanError> {
        let Some(letter) = word_text
            .get(self.offset_in_word..)
            .and_then(|rest| rest.chars().next())
        else {
            // Cannot happen for a word we entered, but never index blindly.
            self.word += 1;
            self.offset_in_word = 0;
            return self.next_item();
        };
        let end = self.offset_in_word + letter.len_utf8();
        let ends_cluster = end >= word_text.len();
        let Some(kind) = self.kind_of(letter) else {
            self.step_past_letter(end, word_text.len());
            return Err(ScanError::Unknown(letter));
        };
        match kind {
            ValueKind::Flag => {
                self.step_past_letter(end, word_text.len());
                Ok(Item::Option {
                    letter,
                    value: None,
                })
            }
            ValueKind::Required if !ends_cluster => {
                self.word += 1;
                self.offset_in_word = 0;
                Ok(Item::Option {
                    letter,
                    value: word_text.get(end..),
                })
            }
            ValueKind::Required => {
                self.word += 1;
                self.offset_in_word = 0;
                match self.args.get(self.word) {
                    Some(value) => {
                        self.word += 1;
                        Ok(Item::Option {
                            letter,
                            value: Some(value.as_str()),
                        })
                    }
                    None => Err(ScanError::MissingValue(letter)),
                }
            }
            ValueKind::OptionalNumber | ValueKind::OptionalWord => {
                self.step_past_letter(end, word_text.len());
                let value = if ends_cluster {
                    let accepts: fn(&str) -> bool = if kind == ValueKind::OptionalNumber {
                        |word| word.starts_with(|c: char| c.is_ascii_digit())
                    } else {
                        |word| !word.starts_with('-')
                    };
                    self.take_optional_word(accepts)
                } else {
                    None
                };
                Ok(Item::Option { letter, value })
            }
        }
    }

    fn next_item(&mut self) -> Result<Item<'a>, ScanError> {
        let args = self.args;
        let Some(word_text) = args.get(self.word).map(String::as_str) else {
            self.finished = true;
            return Ok(Item::EndOfOptions);
        };
        if self.offset_in_word == 0 {
            if word_text == "--" {
                self.word += 1;
                self.finished = true;
                return Ok(Item::EndOfOptions);
            }
            if !word_text.starts_with('-') || word_text == "-" {
                self.word += 1;
                return Ok(Item::Positional(word_text));
            }
            self.offset_in_word = 1;
        }
        self.scan_letter(word_text)
    }
}

impl<'a> Iterator for Scanner<'a> {
    type Item = Result<Item<'a>, ScanError>;

    /// Ends after [`Item::EndOfOptions`], which is also produced when the
    /// words run out.
    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        Some(self.next_item())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::test_support::words;

    const TABLE: &OptionTable = &[
        ('c', ValueKind::OptionalNumber),
        ('C', ValueKind::OptionalNumber),
        ('d', ValueKind::Flag),
        ('l', ValueKind::Required),
        ('k', ValueKind::OptionalWord),
    ];

    fn scan(line: &str) -> (Vec<Result<Item<'static>, ScanError>>, Vec<String>) {
        // Leaking keeps the borrowed items simple to compare in tests.
        let args: &'static [String] = Vec::leak(words(line));
        let mut scanner = Scanner::new(args, TABLE);
        let items: Vec<_> = scanner.by_ref().collect();
        (items, scanner.rest().to_vec())
    }

    fn opt(letter: char, value: Option<&'static str>) -> Result<Item<'static>, ScanError> {
        Ok(Item::Option { letter, value })
    }

    #[test]
    fn separate_and_attached_values() {
        let (items, rest) = scan("-l 1 -l2 -l -100");
        assert_eq!(
            items,
            vec![
                opt('l', Some("1")),
                opt('l', Some("2")),
                opt('l', Some("-100")),
                Ok(Item::EndOfOptions)
            ]
        );
        assert!(rest.is_empty());
    }

    #[test]
    fn clusters_and_optional_numbers() {
        let (items, _) = scan("-cC -dc 5 -C");
        assert_eq!(
            items,
            vec![
                opt('c', None),
                opt('C', None),
                opt('d', None),
                opt('c', Some("5")),
                opt('C', None),
                Ok(Item::EndOfOptions)
            ]
        );
        // a non-digit next word is not a rate
        let (items, _) = scan("-c -C 7");
        assert_eq!(items[0], opt('c', None));
        assert_eq!(items[1], opt('C', Some("7")));
        // -c5 is -c then an unknown -5, as with netperf's getopt
        let (items, _) = scan("-c5");
        assert_eq!(items[0], opt('c', None));
        assert_eq!(items[1], Err(ScanError::Unknown('5')));
    }

    #[test]
    fn optional_words() {
        let (items, _) = scan("-k THROUGHPUT -k -d -k");
        assert_eq!(
            items,
            vec![
                opt('k', Some("THROUGHPUT")),
                opt('k', None),
                opt('d', None),
                opt('k', None),
                Ok(Item::EndOfOptions)
            ]
        );
    }

    #[test]
    fn double_dash_ends_the_section() {
        let (items, rest) = scan("-d -- -m 1");
        assert_eq!(items, vec![opt('d', None), Ok(Item::EndOfOptions)]);
        assert_eq!(rest, words("-m 1"));
        // a required value may be "--" itself, as with getopt
        let (items, rest) = scan("-l -- -d");
        assert_eq!(items[0], opt('l', Some("--")));
        assert_eq!(items[1], opt('d', None));
        assert!(rest.is_empty());
    }

    #[test]
    fn errors_and_positionals() {
        let (items, _) = scan("-x");
        assert_eq!(items[0], Err(ScanError::Unknown('x')));
        let (items, _) = scan("-d -l");
        assert_eq!(items[1], Err(ScanError::MissingValue('l')));
        let (items, _) = scan("stray - -d");
        assert_eq!(items[0], Ok(Item::Positional("stray")));
        assert_eq!(items[1], Ok(Item::Positional("-")));
        assert_eq!(items[2], opt('d', None));
        let (items, _) = scan("-é");
        assert_eq!(items[0], Err(ScanError::Unknown('é')));
        let (items, _) = scan("");
        assert_eq!(items, vec![Ok(Item::EndOfOptions)]);
    }
}
