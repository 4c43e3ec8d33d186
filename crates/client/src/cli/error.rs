//! The errors of command-line parsing. Each displays as one line that names
//! the option and the offending text, ready for the binary to print.

use thiserror::Error;

/// Which part of the command line an option came from: global options come
/// before `--`, test-specific options after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Global,
    Test,
}

/// An option as the user would recognise it in a message: `-m`, or
/// `test option -m` after `--`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionName {
    pub letter: char,
    pub section: Section,
}

impl std::fmt::Display for OptionName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.section {
            Section::Global => write!(f, "-{}", self.letter),
            Section::Test => write!(f, "test option -{}", self.letter),
        }
    }
}

/// A command line netperf-ng refuses.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CliError {
    /// A letter neither netperf's global nor its test-specific parser knows.
    #[error("unknown option -{letter}{}", section_hint(*.section))]
    UnknownOption { letter: char, section: Section },

    /// An option that needs a value came last.
    #[error("{option} requires a value")]
    MissingValue { option: OptionName },

    /// A value that does not parse or is out of range.
    #[error("invalid value '{value}' for {option}: {reason}")]
    InvalidValue {
        option: OptionName,
        value: String,
        reason: String,
    },

    /// A word that is neither an option nor an option's value (netperf
    /// silently ignores these; often an unquoted value with a space).
    #[error("unexpected argument '{0}' (quote values that contain spaces)")]
    UnexpectedArgument(String),

    /// A netperf-ng extension option (`--name`) that is unknown or malformed.
    #[error("{0}")]
    Extension(String),
}

fn section_hint(section: Section) -> &'static str {
    match section {
        Section::Global => " (test-specific options go after --)",
        Section::Test => " after --",
    }
}

impl CliError {
    /// Shorthand for [`CliError::InvalidValue`].
    pub fn invalid(option: OptionName, value: &str, reason: impl ToString) -> Self {
        CliError::InvalidValue {
            option,
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_clear_line() {
        let global_m = OptionName {
            letter: 'm',
            section: Section::Global,
        };
        let test_m = OptionName {
            letter: 'm',
            section: Section::Test,
        };
        assert_eq!(
            CliError::UnknownOption {
                letter: 'm',
                section: Section::Global
            }
            .to_string(),
            "unknown option -m (test-specific options go after --)"
        );
        assert_eq!(
            CliError::UnknownOption {
                letter: 'z',
                section: Section::Test
            }
            .to_string(),
            "unknown option -z after --"
        );
        assert_eq!(
            CliError::MissingValue { option: global_m }.to_string(),
            "-m requires a value"
        );
        assert_eq!(
            CliError::invalid(test_m, "abc", "not a number").to_string(),
            "invalid value 'abc' for test option -m: not a number"
        );
        assert_eq!(
            CliError::UnexpectedArgument("here".into()).to_string(),
            "unexpected argument 'here' (quote values that contain spaces)"
        );
    }
}
