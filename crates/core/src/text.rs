//! A place in a text file, for the readers of linklab's configuration and
//! scenario files (TOML) to say where a mistake is.

use core::fmt;

/// A place in a text, counted from 1: shown as `line L, column C`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Line.
    pub line: usize,
    /// Column, in characters.
    pub column: usize,
}

impl Position {
    /// The place of octet `offset` of `text`: an offset inside a character
    /// counts as that character, one past the end as the end.
    pub fn of(text: &str, offset: usize) -> Position {
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(Position::of(text, 0), Position { line: 1, column: 1 });
        assert_eq!(Position::of(text, 6), Position { line: 2, column: 1 });
        // 'é' is two octets: the '=' after it is the fourth character.
        assert_eq!(Position::of(text, 10), Position { line: 2, column: 4 });
        assert_eq!(Position::of(text, 10).to_string(), "line 2, column 4");
    }

    #[test]
    fn an_offset_inside_a_character_is_that_character_and_past_the_end_the_end() {
        let text = "x\né";
        // Octet 3 is the second octet of 'é'.
        assert_eq!(Position::of(text, 3), Position { line: 2, column: 1 });
        assert_eq!(Position::of(text, 99), Position { line: 2, column: 2 });
    }
}
