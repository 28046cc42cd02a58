//! The status listener (`[status] listen`): a read-only HTTP/1.1 server
//! with the station's live page, its status as JSON and its metrics.
//!
//! - `/` the page, `/page.css` and `/page.js` its style and script (all
//!   built into the binary; nothing is fetched from elsewhere), which
//!   reads `/status.json` every [`REFRESH`] and draws it;
//! - `/status.json` the [`StatusReport`] `linklab status` shows;
//! - `/metrics` the same in the OpenMetrics text format ([`metrics`]).
//!
//! It never touches the station's [`Core`](crate::Core): the driver
//! publishes a report every [`PUBLISH_EVERY`] through a watch channel and
//! the server reads the latest. A client gets [`Limits`]: a request head
//! larger than `max_head` is answered 431 and the connection closed, one
//! that takes longer than `head_timeout` to arrive is dropped, at most
//! `max_connections` are served at once (the next are closed at once),
//! and none lasts longer than `connection_life`. Anything but GET and
//! HEAD is 405, any other path 404.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use crate::status::StatusReport;

pub mod metrics;

/// How often the driver publishes a new report.
pub const PUBLISH_EVERY: Duration = Duration::from_secs(1);

/// How often the page asks for a new report (the script's own constant
/// says the same).
pub const REFRESH: Duration = Duration::from_secs(2);

const PAGE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// What one client may ask of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once.
    pub max_connections: usize,
    /// The largest request head (request line and headers), octets.
    pub max_head: usize,
    /// How long a request head may take to arrive.
    pub head_timeout: Duration,
    /// How long a connection may stay open, requests and all.
    pub connection_life: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 64,
            max_head: 16 * 1024,
            head_timeout: Duration::from_secs(5),
            connection_life: Duration::from_secs(60),
        }
    }
}

/// The latest report, as published by the driver (`None` before the
/// first).
pub type Reports = watch::Receiver<Option<Arc<StatusReport>>>;

/// Serves `listener` until the task is dropped or aborted.
pub async fn serve(listener: TcpListener, reports: Reports, limits: Limits) {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of descriptors, most likely: wait for some to close.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // Over the limit: closed at once, unread.
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let reports = reports.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = service_fn(move |request: Request<Incoming>| {
                let report = reports.borrow().clone();
                async move { Ok::<_, Infallible>(respond(&request, report.as_deref())) }
            });
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.head_timeout)
                .max_buf_size(limits.max_head.max(8192));
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(limits.connection_life, connection).await;
        });
    }
}

/// The answer to `request`, given the latest report.
fn respond(request: &Request<Incoming>, report: Option<&StatusReport>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "read-only: GET or HEAD\n");
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let (content_type, body): (&'static str, Bytes) = match request.uri().path() {
        "/" => (
            "text/html; charset=utf-8",
            Bytes::from_static(PAGE.as_bytes()),
        ),
        "/page.css" => (
            "text/css; charset=utf-8",
            Bytes::from_static(STYLE.as_bytes()),
        ),
        "/page.js" => (
            "text/javascript; charset=utf-8",
            Bytes::from_static(SCRIPT.as_bytes()),
        ),
        "/status.json" | "/metrics" if report.is_none() => {
            return plain(StatusCode::SERVICE_UNAVAILABLE, "the station is starting\n")
        }
        "/status.json" => match report.map(serde_json::to_vec) {
            Some(Ok(json)) => ("application/json", Bytes::from(json)),
            _ => return plain(StatusCode::INTERNAL_SERVER_ERROR, "no report\n"),
        },
        "/metrics" => (
            metrics::CONTENT_TYPE,
            Bytes::from(report.map(metrics::render).unwrap_or_default()),
        ),
        _ => {
            return plain(
                StatusCode::NOT_FOUND,
                "not found: try / or /status.json or /metrics\n",
            )
        }
    };
    let body = if request.method() == Method::HEAD {
        Bytes::new()
    } else {
        body
    };
    let mut response = Response::new(Full::new(body));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    secure(headers);
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    secure(headers);
    response
}

/// Nothing cached, nothing sniffed, nothing loaded from elsewhere, never
/// framed.
fn secure(headers: &mut hyper::HeaderMap) {
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
        ),
    );
}
