// The station's status page: reads /status.json every REFRESH_MS and
// draws it. Text from the station (callsigns, frames) is only ever set
// as text, never as markup.
"use strict";

const REFRESH_MS = 2000;
const SVG = "http://www.w3.org/2000/svg";
// Octets each way per link at the last refresh, for the throughput.
let previous = { at: 0, links: new Map() };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children) node.append(c instanceof Node ? c : String(c));
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

function replace(id, ...children) {
  document.getElementById(id).replaceChildren(...children);
}

function octets(n) {
  if (n < 10000) return `${n} B`;
  if (n < 10000000) return `${(n / 1000).toFixed(1)} kB`;
  return `${(n / 1000000).toFixed(1)} MB`;
}

function duration(s) {
  if (s < 120) return `${s.toFixed(0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(0)} min`;
  if (s < 172800) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86400).toFixed(1)} d`;
}

function percent(x) {
  return `${(100 * x).toFixed(x < 0.1 ? 1 : 0)} %`;
}

// The busy share of the last hour, one point a minute, newest right
// (a station up for less than an hour has fewer minutes).
function busyPlot(port) {
  const shares = port.air.busy_share;
  const slots = 60;
  const offset = slots - shares.length;
  const plot = svg("svg", { class: "busy", id: `busy-${port.number}`, viewBox: "0 0 610 100", preserveAspectRatio: "none" });
  const top = Math.max(0.05, ...shares);
  const x = (i) => 5 + (600 * (offset + i)) / (slots - 1);
  const y = (s) => 88 - (80 * s) / top;
  plot.append(svg("line", { class: "axis", x1: 5, y1: 88, x2: 605, y2: 88 }));
  const points = shares.map((s, i) => `${x(i).toFixed(1)},${y(s).toFixed(1)}`).join(" ");
  plot.append(svg("polyline", { points }));
  shares.forEach((s, i) => {
    if (s > 0) {
      const dot = svg("circle", { class: "point", cx: x(i).toFixed(1), cy: y(s).toFixed(1), r: 2.5 });
      dot.append(svg("title", {}));
      dot.firstChild.textContent = `${shares.length - 1 - i} min ago: ${percent(s)}`;
      plot.append(dot);
    }
  });
  const label = (tx, ty, text) => {
    const t = svg("text", { x: tx, y: ty });
    t.textContent = text;
    plot.append(t);
  };
  label(8, 10, percent(top));
  label(8, 99, "1 h ago");
  label(585, 99, "now");
  return plot;
}

function renderPorts(report) {
  replace("ports", ...report.ports.map((p) => {
    const air = p.air;
    const facts = [
      ["TNC", p.tnc],
      ["bit rate", air.bit_rate ? `${air.bit_rate} bit/s` : "not configured"],
      ["frames sent", p.frames_sent],
      ["frames received", p.frames_received],
      ["octets sent", octets(p.octets_sent)],
      ["octets received", octets(p.octets_received)],
      ["retries", air.links.i_frames_resent],
      ["REJ sent / received", `${air.links.rej_sent} / ${air.links.rej_received}`],
      ["T1 expiries", air.links.t1_expiries],
      ["digipeated", p.digipeated],
      ["channel busy", air.bit_rate ? duration(air.busy_s) : "-"],
      ["TNC losses", p.tnc_losses],
    ];
    const dl = el("dl");
    for (const [k, v] of facts) dl.append(el("dt", {}, k), el("dd", {}, v));
    const box = el("div", { class: "port", id: `port-${p.number}` },
      el("h3", {}, `${p.number} ${p.name} `, el("span", { class: p.up ? "up" : "down" }, p.up ? "up" : "down")),
      el("p", { class: "quiet" }, p.callsigns.join(" ")),
      dl);
    if (air.bit_rate) {
      const now = air.busy_share.length ? air.busy_share[air.busy_share.length - 1] : 0;
      box.append(el("p", {}, `channel busy, last hour (this minute ${percent(now)}):`), busyPlot(p));
    } else {
      box.append(el("p", { class: "quiet" }, "no bitrate in the configuration: no busy-time plot"));
    }
    return box;
  }));
}

function renderLinks(report, at) {
  const body = document.querySelector("#links tbody");
  const seen = new Map();
  const rows = report.links.map((l) => {
    const key = `${l.port} ${l.local} ${l.remote}`;
    const c = l.counters;
    const total = c.i_octets_sent + c.i_octets_received;
    seen.set(key, total);
    const before = previous.links.get(key);
    const dt = (at - previous.at) / 1000;
    const rate = before !== undefined && dt > 0 && total >= before ? `${((total - before) / dt).toFixed(0)} B/s` : "-";
    const td = (cls, v) => el("td", { class: cls }, v);
    return el("tr", {},
      td("", l.port), td("", l.local), td("", l.remote), td("state", l.state),
      td("num", `${l.unacked} / ${l.queued} / ${l.modulus}`),
      td("num octets-sent", c.i_octets_sent), td("num octets-received", c.i_octets_received),
      td("num retries", c.i_frames_resent),
      td("num", `${c.rej_sent}/${c.rej_received} ${c.srej_sent}/${c.srej_received}`),
      td("num", c.t1_expiries), td("num throughput", rate), td("", l.held_by));
  });
  body.replaceChildren(...rows);
  document.getElementById("no-links").hidden = rows.length > 0;
  previous = { at, links: seen };
}

function renderHeard(report) {
  replace("heard", ...report.ports.map((p) => el("div", {},
    el("h3", {}, `port ${p.number} ${p.name}`),
    p.heard.length
      ? el("ul", { class: "heard", id: `heard-${p.number}` }, ...p.heard.map((h) => el("li", {}, h)))
      : el("p", { class: "quiet" }, "nobody heard yet"))));
}

function renderMonitor(report) {
  const start = Date.now() / 1000 - report.uptime_s;
  replace("monitor", ...report.ports.map((p) => {
    const pre = el("pre", { class: "monitor", id: `monitor-${p.number}` });
    for (const line of p.air.monitor.slice().reverse()) {
      const clock = new Date((start + line.at_s) * 1000).toLocaleTimeString();
      pre.append(el("span", { class: line.sent ? "tx" : "rx" }, `${clock} ${line.sent ? "TX" : "RX"} ${line.text}`), "\n");
    }
    if (!p.air.monitor.length) pre.append("(no frame yet)");
    return el("div", {}, el("h3", {}, `port ${p.number} ${p.name}, newest first`), pre);
  }));
}

function table(head, rows) {
  if (!rows.length) return el("p", { class: "quiet" }, "none");
  return el("div", { class: "scroll" }, el("table", {},
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((v) => el("td", {}, v)))))));
}

function renderRest(report) {
  replace("services", table(["callsign", "answer", "answers", "served", "sessions (port caller age in/out)"],
    report.services.map((s) => [s.callsign, s.kind, s.registered ? "yes" : "no (callsign taken)", s.served,
      s.sessions.map((x) => `${x.port} ${x.caller} ${duration(x.age_s)} ${x.octets_in}/${x.octets_out}`).join("; ") || "-"])));
  replace("tuns", table(["device", "port", "callsign", "addresses", "mode", "from kernel", "to kernel", "dropped", "VC links"],
    report.tuns.map((t) => [t.name, t.port, t.callsign, t.addresses.join(" "), t.mode, t.from_kernel, t.to_kernel, t.dropped, t.links])));
  const d = report.dtn;
  replace("dtn", d
    ? table(["node", "callsign", "port", "running", "stored bundles", "contacts", "forwarded", "delivered"],
      [[d.eid, d.callsign, d.port, d.running ? "yes" : "no", d.stored, d.contacts.join(" ") || "none", d.forwarded, d.delivered]])
    : el("p", { class: "quiet" }, "no DTN node configured"));
  replace("netrom", renderNetrom(report.netrom));
  replace("beacons", table(["port", "header", "every", "next in", "sent"],
    report.beacons.map((b) => [b.port, b.header, duration(b.every_s), duration(b.next_in_s), b.sent])));
}

/* The node: its figures, neighbours (LinBPQ's ROUTES), destinations
   with every route (NODES) and circuits. */
function renderNetrom(n) {
  if (!n) return el("p", { class: "quiet" }, "no NET/ROM node configured");
  const d = n.datagrams;
  return el("div", {},
    el("p", {}, `node ${n.alias}:${n.callsign} on port ${n.ports.join(", ")}, next NODES in ${duration(n.next_broadcast_in_s)}; ` +
      `datagrams ${d.delivered} for us, ${d.forwarded} forwarded, dropped ${d.ttl_expired} TTL, ${d.no_route} no route, ${d.malformed} malformed`),
    el("h3", {}, "neighbours"),
    table(["port", "callsign", "quality", "destinations", "locked", "link failures"],
      n.neighbours.map((x) => [x.port, x.callsign, x.quality, x.destinations, x.locked ? "yes" : "no", x.failures])),
    el("h3", {}, "destinations"),
    table(["node", "routes (quality/obsolescence via neighbour, port)"],
      n.destinations.map((x) => [`${x.alias}:${x.callsign}`,
        x.routes.map((r) => `${r.quality}/${r.obsolescence} via ${r.neighbour} ${r.port}${r.locked ? " locked" : ""}`).join("; ") || "-"])),
    el("h3", {}, "circuits"),
    table(["user", "node", "state", "unacknowledged"],
      n.circuits.map((c) => [c.user, c.node, c.state, octets(c.unacknowledged)])));
}

function render(report) {
  const at = Date.now();
  document.getElementById("summary").textContent =
    `up ${duration(report.uptime_s)}, ${report.ports.length} port(s), ${report.links.length} link(s), ${report.clients} client(s)`;
  renderPorts(report);
  renderLinks(report, at);
  renderHeard(report);
  renderMonitor(report);
  renderRest(report);
  document.getElementById("updated").textContent = `updated ${new Date(at).toLocaleTimeString()}`;
}

async function refresh() {
  try {
    const answer = await fetch("/status.json", { cache: "no-store" });
    if (!answer.ok) throw new Error(`${answer.status} ${answer.statusText}`);
    render(await answer.json());
  } catch (e) {
    document.getElementById("updated").textContent = `the station does not answer (${e.message}); trying again`;
  }
  setTimeout(refresh, REFRESH_MS);
}

refresh();
