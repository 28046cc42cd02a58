//! Static routes: which link a bundle leaves by (RFC 9171 5.4 step 1, "the
//! forwarding information base").

use std::fmt;
use std::str::FromStr;

use hardy_bpv7::eid::{Eid, IpnNodeId, NodeId};
use thiserror::Error;

/// A convergence-layer link (a contact), named by the code that drives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

impl fmt::Display for LinkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "link {}", self.0)
    }
}

/// Which destination endpoints a route is for.
///
/// Written as `*` (any), `ipn:N.*` or `ipn:A.N.*` (every service of an
/// `ipn` node), `dtn://node/*` (every service of a `dtn` node) or a whole
/// endpoint ID (that endpoint only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EidPattern {
    /// Every endpoint.
    Any,
    /// Every endpoint of one node.
    Node(NodeId),
    /// One endpoint.
    Exact(Eid),
}

impl EidPattern {
    /// Whether `eid` is one the pattern covers.
    pub fn matches(&self, eid: &Eid) -> bool {
        match self {
            EidPattern::Any => true,
            EidPattern::Node(node) => eid.to_node_id().is_ok_and(|n| &n == node),
            EidPattern::Exact(exact) => exact == eid,
        }
    }
}

/// A pattern that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("bad endpoint pattern {pattern:?}: {why} (use *, ipn:N.*, dtn://node/* or an endpoint ID)")]
pub struct PatternError {
    pattern: String,
    why: String,
}

impl FromStr for EidPattern {
    type Err = PatternError;

    fn from_str(text: &str) -> Result<EidPattern, PatternError> {
        let error = |why: String| PatternError {
            pattern: text.to_string(),
            why,
        };
        if text == "*" {
            return Ok(EidPattern::Any);
        }
        if let Some(node) = text.strip_suffix(".*").filter(|_| text.starts_with("ipn:")) {
            let numbers: Vec<&str> = node["ipn:".len()..].split('.').collect();
            let parse = |n: &str| n.parse::<u32>().map_err(|e| error(format!("{n:?}: {e}")));
            let fqnn = match numbers.as_slice() {
                [node_number] => IpnNodeId {
                    allocator_id: 0,
                    node_number: parse(node_number)?,
                },
                [allocator_id, node_number] => IpnNodeId {
                    allocator_id: parse(allocator_id)?,
                    node_number: parse(node_number)?,
                },
                _ => return Err(error("an ipn node is N or A.N".into())),
            };
            return Ok(EidPattern::Node(NodeId::Ipn(fqnn)));
        }
        if let Some(node) = text
            .strip_suffix("/*")
            .filter(|_| text.starts_with("dtn://"))
        {
            let eid: Eid = format!("{node}/")
                .parse()
                .map_err(|e: hardy_bpv7::eid::Error| error(e.to_string()))?;
            return match eid.try_to_node_id() {
                Ok(NodeId::Dtn(node)) if !node.node_name.is_empty() => {
                    Ok(EidPattern::Node(NodeId::Dtn(node)))
                }
                _ => Err(error("a dtn pattern names a node".into())),
            };
        }
        let eid: Eid = text
            .parse()
            .map_err(|e: hardy_bpv7::eid::Error| error(e.to_string()))?;
        Ok(EidPattern::Exact(eid))
    }
}

/// A static route: bundles for endpoints matching `pattern` leave by `link`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The destinations.
    pub pattern: EidPattern,
    /// The link to the next hop.
    pub link: LinkId,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eid(text: &str) -> Eid {
        text.parse().unwrap()
    }

    #[test]
    fn patterns_cover_what_they_say() {
        let any: EidPattern = "*".parse().unwrap();
        let ipn: EidPattern = "ipn:5.*".parse().unwrap();
        let ipn3: EidPattern = "ipn:977.5.*".parse().unwrap();
        let dtn: EidPattern = "dtn://relay/*".parse().unwrap();
        let exact: EidPattern = "ipn:5.7".parse().unwrap();
        assert!(any.matches(&eid("dtn://x/y")));
        assert!(ipn.matches(&eid("ipn:5.7")) && ipn.matches(&eid("ipn:5.0")));
        assert!(!ipn.matches(&eid("ipn:6.7")) && !ipn.matches(&eid("ipn:977.5.7")));
        assert!(ipn3.matches(&eid("ipn:977.5.7")));
        assert!(dtn.matches(&eid("dtn://relay/mail")) && !dtn.matches(&eid("dtn://other/mail")));
        assert!(exact.matches(&eid("ipn:5.7")) && !exact.matches(&eid("ipn:5.8")));
    }

    #[test]
    fn bad_patterns_say_why() {
        for bad in ["ipn:x.*", "ipn:1.2.3.*", "dtn:///*", "nonsense", ""] {
            let e = bad.parse::<EidPattern>().unwrap_err();
            assert!(e.to_string().contains("bad endpoint pattern"), "{e}");
        }
    }
}
