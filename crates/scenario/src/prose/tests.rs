use super::*;

/// The sources that name report text, scanned for `check_note!` and
/// `section_text!`.
const CODE: &[(&str, &str)] = &[
    ("bux/arm.rs", include_str!("../bux/arm.rs")),
    ("bux/rnr.rs", include_str!("../bux/rnr.rs")),
    ("bux/sections.rs", include_str!("../bux/sections.rs")),
    (
        "bux/sections/delay.rs",
        include_str!("../bux/sections/delay.rs"),
    ),
    ("dstar/sections.rs", include_str!("../dstar/sections.rs")),
    ("dstar/stations.rs", include_str!("../dstar/stations.rs")),
    ("korb/sections.rs", include_str!("../korb/sections.rs")),
    (
        "korb/sections/larger_segments.rs",
        include_str!("../korb/sections/larger_segments.rs"),
    ),
    (
        "ronan/ack_window.rs",
        include_str!("../ronan/ack_window.rs"),
    ),
    (
        "ronan/measured/section.rs",
        include_str!("../ronan/measured/section.rs"),
    ),
    ("ronan/repeater.rs", include_str!("../ronan/repeater.rs")),
    (
        "ronan/tables_2_3.rs",
        include_str!("../ronan/tables_2_3.rs"),
    ),
    ("ronan/tcpip.rs", include_str!("../ronan/tcpip.rs")),
    (
        "zielinski/reproduce.rs",
        include_str!("../zielinski/reproduce.rs"),
    ),
    (
        "zielinski/reproduce/windows.rs",
        include_str!("../zielinski/reproduce/windows.rs"),
    ),
];

/// One `check_note!` or `section_text!` in the code.
#[derive(Debug)]
struct Call {
    file: &'static str,
    kind: Kind,
    key: String,
    names: Vec<String>,
}

/// The string literal at the start of `s` (no escapes: keys have none)
/// and what follows it.
fn literal(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start().strip_prefix('"')?;
    let end = s.find('"')?;
    Some((&s[..end], &s[end + 1..]))
}

/// The arguments after the key, split at the commas outside brackets and
/// string literals, up to the macro's closing parenthesis.
fn arguments(s: &str) -> Vec<&str> {
    let mut args = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0usize, false, false, 0);
    for (i, c) in s.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => depth += 1,
            ')' if depth == 0 => {
                args.push(&s[start..i]);
                break;
            }
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                args.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    args.into_iter()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect()
}

/// Every call in the code.
fn calls() -> Vec<Call> {
    let mut calls = Vec::new();
    for (file, code) in CODE {
        for (kind, mark) in [
            (Kind::Check, "check_note!("),
            (Kind::Section, "section_text!("),
        ] {
            for (at, _) in code.match_indices(mark) {
                let (key, rest) = literal(&code[at + mark.len()..])
                    .unwrap_or_else(|| panic!("{file}: {mark} without a literal key"));
                let names = arguments(rest)
                    .into_iter()
                    .map(|arg| {
                        let (name, _) = arg.split_once('=').unwrap_or_else(|| {
                            panic!("{file}: {key}: argument {arg} not name = value")
                        });
                        name.trim().to_string()
                    })
                    .collect();
                calls.push(Call {
                    file,
                    kind,
                    key: key.to_string(),
                    names,
                });
            }
        }
    }
    calls
}

#[test]
fn render_fills_placeholders_and_doubled_braces() {
    let n = 3;
    let text = render("{n} of {{x}}: {what}", &[("what", &"all"), ("n", &n)]);
    assert_eq!(text.as_deref(), Ok("3 of {x}: all"));
    assert_eq!(
        render("no placeholders", &[]).as_deref(),
        Ok("no placeholders")
    );
}

#[test]
fn render_refuses_unknown_unused_and_repeated_values_and_stray_braces() {
    let err =
        |template: &str, values: &[(&str, &dyn Display)]| render(template, values).unwrap_err();
    assert_eq!(err("a {b}", &[]), "no value for placeholder {b}");
    assert_eq!(err("a", &[("b", &1)]), "value {b} not used by the text");
    assert_eq!(err("{b}", &[("b", &1), ("b", &2)]), "value {b} given twice");
    assert!(err("a {b", &[]).starts_with("unclosed {"));
    assert!(err("a } b", &[]).starts_with("unmatched }"));
}

#[test]
fn text_names_the_key_that_is_missing_or_misfilled() {
    let missing = text(Kind::Check, "nobody/none", &[]).unwrap_err();
    assert_eq!(
        missing.to_string(),
        "no [check] text \"nobody/none\" in crates/scenario/experiments/notes/"
    );
    let (key, _) = PROSE.as_ref().unwrap().section.iter().next().unwrap();
    let misfilled = text(Kind::Section, key, &[("no_such_value", &0)]).unwrap_err();
    assert!(
        matches!(misfilled, ProseError::Render { .. }),
        "{misfilled}"
    );
}

#[test]
fn every_file_parses_without_a_key_given_twice() {
    if let Err(e) = load() {
        panic!("{e}");
    }
}

#[test]
fn keys_in_the_code_and_in_the_data_match_one_for_one() {
    let prose = PROSE.as_ref().unwrap();
    let calls = calls();
    for (kind, table) in [(Kind::Check, &prose.check), (Kind::Section, &prose.section)] {
        for key in table.keys() {
            assert!(
                calls.iter().any(|c| c.kind == kind && &c.key == key),
                "[{kind}] \"{key}\" ({}) is named by no code",
                table[key].0
            );
        }
    }
    for call in &calls {
        let table = match call.kind {
            Kind::Check => &prose.check,
            Kind::Section => &prose.section,
        };
        assert!(
            table.contains_key(&call.key),
            "{}: [{}] \"{}\" has no text",
            call.file,
            call.kind,
            call.key
        );
    }
}

#[test]
fn every_call_supplies_exactly_its_texts_placeholders() {
    let prose = PROSE.as_ref().unwrap();
    for call in calls() {
        let table = match call.kind {
            Kind::Check => &prose.check,
            Kind::Section => &prose.section,
        };
        let Some((_, template)) = table.get(&call.key) else {
            continue;
        };
        let mut wanted: Vec<&str> = pieces(template)
            .unwrap_or_else(|e| panic!("[{}] \"{}\": {e}", call.kind, call.key))
            .into_iter()
            .filter_map(|p| match p {
                Piece::Placeholder(name) => Some(name),
                Piece::Literal(_) => None,
            })
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut given: Vec<&str> = call.names.iter().map(String::as_str).collect();
        given.sort_unstable();
        assert_eq!(
            given, wanted,
            "{}: [{}] \"{}\": values given and placeholders used differ",
            call.file, call.kind, call.key
        );
    }
}
