//! The `[[tun]]` tables: IP over AX.25 on a TUN device for the kernel's
//! stack, checked into a [`TunSpec`] (the AX.25 interface's settings, as
//! `linklab ip ... tun` takes them on its command line).

use std::collections::BTreeMap;
use std::net::IpAddr;

use linklab_ip::{Ax25Config, Encapsulation};
use linklab_wire::ax25::{same_station, Address};
use linklab_wire::control::Modulus;
use serde::Deserialize;

use super::{ConfigError, PortFile, PortSpec, Reader, ServiceSpec, Spanned, TunSpec};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct TunFile {
    port: Spanned<String>,
    name: Spanned<String>,
    callsign: Spanned<String>,
    addresses: Spanned<Vec<String>>,
    mode: Option<Spanned<String>>,
    mtu: Option<Spanned<usize>>,
    arp: Option<bool>,
    #[serde(default)]
    neighbours: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    ipmode: BTreeMap<String, Spanned<String>>,
}

impl Reader<'_> {
    pub(super) fn tun(
        &self,
        i: usize,
        tun: &TunFile,
        ports: &[PortSpec],
        port_files: &[PortFile],
        services: &[ServiceSpec],
        earlier: &[TunSpec],
    ) -> Result<TunSpec, ConfigError> {
        let at = |key: &str| format!("tun[{}].{key}", i + 1);
        let port = self.port_named(&tun.port, ports, &at("port"))?;
        let name = tun.name.get_ref().clone();
        let valid = (1..=15).contains(&name.len())
            && name != "."
            && name != ".."
            && !name
                .chars()
                .any(|c| c == '/' || c == ':' || c.is_whitespace());
        if !valid {
            return Err(self.error(
                Some(tun.name.span()),
                &at("name"),
                format!(
                    "{name:?} is not an interface name (1-15 characters, no '/', ':' or blanks)"
                ),
            ));
        }
        if earlier.iter().any(|t| t.name == name) {
            return Err(self.error(
                Some(tun.name.span()),
                &at("name"),
                format!("a TUN device named {name:?} is given above already"),
            ));
        }
        let local = self.callsign(&tun.callsign, &at("callsign"))?;
        let taken = ports[port]
            .callsigns
            .iter()
            .chain(&ports[port].aliases)
            .any(|c| same_station(c, &local))
            || services.iter().any(|s| same_station(&s.callsign, &local))
            || earlier.iter().any(|t| same_station(&t.ax25.local, &local));
        if taken {
            return Err(self.error(
                Some(tun.callsign.span()),
                &at("callsign"),
                format!("{local} is used by the port, a service or another TUN device; IP over AX.25 needs a callsign of its own"),
            ));
        }
        let mut addresses = Vec::new();
        for text in tun.addresses.get_ref() {
            let parsed = text.split_once('/').and_then(|(ip, len)| {
                let ip: IpAddr = ip.parse().ok()?;
                let len: u8 = len.parse().ok()?;
                let max = if ip.is_ipv4() { 32 } else { 128 };
                (len <= max).then_some((ip, len))
            });
            match parsed {
                Some(a) => addresses.push(a),
                None => {
                    return Err(self.error(
                        Some(tun.addresses.span()),
                        &at("addresses"),
                        format!("{text:?} is not ADDRESS/PREFIX, e.g. 44.128.0.1/24 or fd00::1/64"),
                    ))
                }
            }
        }
        if addresses.is_empty() {
            return Err(self.error(
                Some(tun.addresses.span()),
                &at("addresses"),
                "no address: give at least one, e.g. [\"44.128.0.1/24\"]".into(),
            ));
        }
        let encapsulation = |v: &Spanned<String>, key: &str| match v.get_ref().as_str() {
            "vc" => Ok(Encapsulation::VirtualCircuit),
            "datagram" => Ok(Encapsulation::Datagram),
            other => Err(self.error(
                Some(v.span()),
                key,
                format!("{other:?}: write \"vc\" (connected mode) or \"datagram\" (UI frames)"),
            )),
        };
        let mode = match &tun.mode {
            Some(m) => encapsulation(m, &at("mode"))?,
            None => Encapsulation::VirtualCircuit,
        };
        let mtu = match &tun.mtu {
            Some(m) if !(68..=65_535).contains(m.get_ref()) => {
                return Err(self.error(
                    Some(m.span()),
                    &at("mtu"),
                    format!("{} octets: an IP MTU is 68 to 65535 (RFC 791)", m.get_ref()),
                ))
            }
            Some(m) => *m.get_ref(),
            None => 256,
        };
        if addresses.iter().any(|(ip, _)| ip.is_ipv6()) && mtu < 1280 {
            return Err(self.error(
                tun.mtu.as_ref().map(Spanned::span).or(Some(tun.addresses.span())),
                &at("mtu"),
                format!("{mtu} octets: IPv6 needs at least 1280 (RFC 8200 section 5); with a modulo-128 port, longer datagrams are segmented"),
            ));
        }
        let mut link = ports[port].agw.link.clone();
        // Linux's ax25 interface: one datagram per frame (paclen = MTU),
        // unless the port sets N1 (then longer datagrams are segmented),
        // as `linklab ip` without and with --n1.
        if port_files.get(port).is_none_or(|p| p.n1.is_none()) {
            link.n1 = mtu.clamp(1, 2048);
        }
        if mode == Encapsulation::Datagram && mtu > link.n1 {
            return Err(self.error(
                tun.mtu.as_ref().map(Spanned::span).or(Some(tun.name.span())),
                &at("mtu"),
                format!("{mtu} octets is above the port's N1 {}: in datagram mode each datagram is one UI frame, which cannot be segmented (AX.25 6.6)", link.n1),
            ));
        }
        if mode == Encapsulation::VirtualCircuit && mtu > link.n1 && link.modulus == Modulus::Mod8 {
            return Err(self.error(
                tun.mtu.as_ref().map(Spanned::span).or(Some(tun.name.span())),
                &at("mtu"),
                format!("{mtu} octets is above N1 {}: in VC mode a longer datagram is segmented, which needs a modulo-128 port (mod128 = true)", link.n1),
            ));
        }
        let mut ax25 = Ax25Config::new(local, mtu, link);
        ax25.encapsulation = mode;
        ax25.arp_ipv4 = match tun.arp {
            Some(false) => None,
            _ => addresses.iter().find_map(|(ip, _)| match ip {
                IpAddr::V4(v4) => Some(*v4),
                IpAddr::V6(_) => None,
            }),
        };
        for (ip, call) in &tun.neighbours {
            let Ok(ip) = ip.parse::<IpAddr>() else {
                return Err(self.error(
                    Some(call.span()),
                    &at("neighbours"),
                    format!("{ip:?} is not an IP address"),
                ));
            };
            if !addresses.iter().any(|(a, _)| a.is_ipv4() == ip.is_ipv4()) {
                return Err(self.error(
                    Some(call.span()),
                    &at("neighbours"),
                    format!("{ip} is not of an IP version the device has an address of"),
                ));
            }
            ax25.neighbours
                .push((ip, self.callsign(call, &at("neighbours"))?));
        }
        for (call, mode) in &tun.ipmode {
            let call = call.parse::<Address>().map_err(|e| {
                self.error(Some(mode.span()), &at("ipmode"), format!("{call:?}: {e}"))
            })?;
            let encapsulation = encapsulation(mode, &at("ipmode"))?;
            if encapsulation == Encapsulation::Datagram && mtu > ax25.link.n1 {
                return Err(self.error(
                    Some(mode.span()),
                    &at("ipmode"),
                    format!("{call} in datagram mode: the MTU {mtu} is above the port's N1 {}, and a UI frame cannot be segmented (AX.25 6.6)", ax25.link.n1),
                ));
            }
            ax25.modes.push((call, encapsulation));
        }
        linklab_ip::Ax25Interface::new(ax25.clone())
            .map_err(|e| self.error(Some(tun.name.span()), &at("name"), e.to_string()))?;
        Ok(TunSpec {
            port,
            name,
            addresses,
            ax25,
        })
    }
}
