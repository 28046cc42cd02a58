//! The node's command line, as users of NET/ROM nodes know it from
//! TheNET and LinBPQ: a station that links to the node's callsign and
//! sends text (PID 0xF0) rather than datagrams gets `NODES`, `ROUTES`,
//! `CONNECT` to a node by alias or callsign, `INFO` and `BYE`. Commands
//! may be shortened to their first letter and are read in any case.
//! This module reads the commands and writes the answers; the circuits
//! they open are [`super::NetromService`]'s.

use linklab_netrom::routing::NodeTable;
use linklab_netrom::wire::Alias;
use linklab_wire::ax25::Address;

/// A command typed at the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Command {
    /// `NODES`: every destination; `NODES name`: one with its routes.
    Nodes(Option<String>),
    /// `ROUTES`: the neighbours.
    Routes,
    /// `CONNECT name`: a circuit to a node.
    Connect(String),
    /// `INFO`: what this node is.
    Info,
    /// `BYE`: leave.
    Bye,
    /// An empty line: the prompt again.
    Empty,
    /// Anything else, or `?`/`HELP`.
    Help(Option<String>),
}

impl Command {
    /// Reads one line (without its CR).
    pub(super) fn parse(line: &str) -> Command {
        let mut words = line.split_whitespace();
        let Some(verb) = words.next() else {
            return Command::Empty;
        };
        let arg = words.next().map(str::to_ascii_uppercase);
        let verb = verb.to_ascii_uppercase();
        let is = |full: &str| !verb.is_empty() && full.starts_with(verb.as_str());
        if is("NODES") {
            Command::Nodes(arg)
        } else if is("ROUTES") {
            Command::Routes
        } else if is("CONNECT") {
            match arg {
                Some(name) => Command::Connect(name),
                None => Command::Help(Some("CONNECT needs a node: C ALIAS or C CALL".into())),
            }
        } else if is("INFO") {
            Command::Info
        } else if is("BYE") || verb == "QUIT" {
            Command::Bye
        } else if verb == "?" || is("HELP") {
            Command::Help(None)
        } else {
            Command::Help(Some(format!("{verb}: unknown command")))
        }
    }
}

/// What the node calls itself in its answers: `ALIAS:CALL}`.
pub(super) fn prompt(alias: &Alias, call: &Address) -> String {
    format!("{}:{}}} ", alias.text(), call)
}

/// `ALIAS:CALL`, or the callsign alone for a blank alias.
pub(super) fn node_name(alias: &Alias, call: &Address) -> String {
    if alias.is_blank() {
        call.to_string()
    } else {
        format!("{}:{}", alias.text(), call)
    }
}

/// The answer to `NODES`: every destination, three to a line.
pub(super) fn nodes(table: &NodeTable, head: &str) -> String {
    let mut out = format!("{head}Nodes:\r");
    let names: Vec<String> = table
        .destinations()
        .filter(|d| !d.routes.is_empty())
        .map(|d| node_name(&d.alias, &d.call))
        .collect();
    for row in names.chunks(3) {
        let cells: Vec<String> = row.iter().map(|n| format!("{n:<18}")).collect();
        out.push_str(cells.join("").trim_end());
        out.push('\r');
    }
    out
}

/// The answer to `NODES name`: its routes, best first, the one in use
/// marked `>`.
pub(super) fn routes_to(table: &NodeTable, head: &str, name: &str) -> String {
    let Some(d) = table.resolve(name) else {
        return format!("{head}{name}: not in the node table\r");
    };
    let mut out = format!("{head}Routes to {}\r", node_name(&d.alias, &d.call));
    for (i, r) in d.routes.iter().enumerate() {
        out.push_str(&format!(
            "{} {} {} {} {}{}\r",
            if i == 0 { '>' } else { ' ' },
            r.quality,
            r.obsolescence,
            r.neighbour.port + 1,
            r.neighbour.call,
            if r.locked { " !" } else { "" }
        ));
    }
    out
}

/// The answer to `ROUTES`: port, neighbour, quality, destinations
/// through it; `!` marks a locked one.
pub(super) fn routes(table: &NodeTable, head: &str) -> String {
    let mut out = format!("{head}Routes:\r");
    for n in table.neighbours() {
        let count = table
            .destinations()
            .filter(|d| {
                table.best_route(&d.call).is_some_and(|r| {
                    r.neighbour.port == n.key.port && r.neighbour.call == n.key.call
                })
            })
            .count();
        out.push_str(&format!(
            "{} {} {} {}{}\r",
            n.key.port + 1,
            n.key.call,
            n.quality,
            count,
            if n.locked { " !" } else { "" }
        ));
    }
    out
}

/// The answer to `?` and to what was not understood.
pub(super) fn help(head: &str, why: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(why) = why {
        out.push_str(&format!("{head}{why}\r"));
    }
    out.push_str(&format!("{head}CONNECT NODES ROUTES INFO BYE\r"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_read_in_any_case_and_shortened() {
        assert_eq!(Command::parse("n"), Command::Nodes(None));
        assert_eq!(
            Command::parse("nodes bpqc"),
            Command::Nodes(Some("BPQC".into()))
        );
        assert_eq!(Command::parse("R"), Command::Routes);
        assert_eq!(
            Command::parse("c  far-2 "),
            Command::Connect("FAR-2".into())
        );
        assert_eq!(Command::parse("b"), Command::Bye);
        assert_eq!(Command::parse("   "), Command::Empty);
        assert!(matches!(Command::parse("c"), Command::Help(Some(_))));
        assert!(matches!(Command::parse("XYZZY"), Command::Help(Some(_))));
        assert_eq!(Command::parse("?"), Command::Help(None));
    }
}
