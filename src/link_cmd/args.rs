//! The options of the link commands (`send`, `listen`, `connect`) beside
//! the shared ones of [`crate::options`]: the way to the radio (a KISS TNC
//! or an AGWPE server) and each command's own.

use std::path::PathBuf;

use clap::Args;
use linklab_io::KissAddress;
use linklab_wire::ax25::Address;

use crate::options::{CommonArgs, LinkArgs, TncArgs};
use crate::usage::usage;

/// The TNC or the AGWPE server a link command works through: exactly
/// one of `--kiss` and `--station`.
#[derive(Args)]
#[group(required = true, multiple = false)]
pub struct Endpoint {
    /// The KISS TNC: tcp:HOST:PORT (e.g. tcp:127.0.0.1:8001, Dire Wolf) or
    /// serial:DEVICE:BAUD (e.g. serial:/dev/ttyUSB0:9600).
    #[arg(long, value_name = "ADDRESS")]
    pub(crate) kiss: Option<KissAddress>,
    /// Or an AGWPE server owning the radio ports (`linklab station`,
    /// `linklab agw`, Dire Wolf, AGWPE): HOST:PORT, e.g. 127.0.0.1:8000.
    /// Its port's settings then hold: the link and TNC options are
    /// refused.
    #[arg(long, value_name = "ADDR:PORT")]
    pub(crate) station: Option<String>,
}

/// The options of `listen`, `send` and `connect` before it is known
/// whether they go through a TNC or an AGWPE server.
#[derive(Args)]
pub struct LinkCommon {
    #[command(flatten)]
    pub(crate) endpoint: Endpoint,
    /// This station's callsign and SSID, e.g. N0CALL-2.
    #[arg(long, value_name = "CALL")]
    pub(crate) mycall: Address,
    /// With --station: the server's radio port, counted from 1 as AGWPE
    /// programs show them [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=255))]
    pub(crate) port: Option<u16>,
    #[command(flatten)]
    pub(crate) link: LinkArgs,
    #[command(flatten)]
    pub(crate) tnc: TncArgs,
}

/// Where a link command goes: its own TNC, or an AGWPE server.
pub(crate) enum Through {
    Kiss(Box<CommonArgs>),
    Station(crate::agw_client::StationArgs),
}

impl LinkCommon {
    /// The TNC's options, or the AGWPE server's; an option the chosen
    /// way cannot honour is a usage error naming it. `mod128` is the
    /// command's --mod128.
    pub(crate) fn through(self, mod128: bool) -> anyhow::Result<Through> {
        match (self.endpoint.kiss, self.endpoint.station) {
            (Some(kiss), _) => {
                if self.port.is_some() {
                    return Err(usage(
                        "--port is the AGWPE radio port of --station; with --kiss, \
                         the TNC's port is --kiss-port"
                            .into(),
                    ));
                }
                Ok(Through::Kiss(Box::new(CommonArgs {
                    kiss,
                    mycall: self.mycall,
                    link: self.link,
                    tnc: self.tnc,
                })))
            }
            (None, Some(address)) => {
                let given = self
                    .link
                    .first_given()
                    .or(self.tnc.first_given())
                    .or(mod128.then_some("--mod128"));
                if let Some(option) = given {
                    return Err(usage(format!(
                        "{option} cannot be used with --station: the AGWPE server's radio port \
                         owns the link and TNC settings (set them where the server is configured)"
                    )));
                }
                if self.tnc.monitor {
                    return Err(usage(
                        "--monitor cannot be used with --station: run `linklab monitor --station` \
                         beside it to see the frames"
                            .into(),
                    ));
                }
                Ok(Through::Station(crate::agw_client::StationArgs {
                    address,
                    port: u8::try_from(self.port.unwrap_or(1) - 1).unwrap_or(0),
                    mycall: self.mycall,
                }))
            }
            // The group requires one of the two.
            (None, None) => Err(usage("give --kiss or --station".into())),
        }
    }
}

#[derive(Args)]
pub struct ListenArgs {
    #[command(flatten)]
    pub(crate) common: LinkCommon,
    /// Write what each connection carries to a file of its own: FILE for
    /// the first, then FILE.2, FILE.3, ... (the next name not taken); in
    /// an existing directory DIR, DIR/transfer-N-CALL, N above every
    /// transfer already there. Nothing is overwritten: an existing FILE is
    /// refused unless --force. A file gets its name once its link is
    /// released by the peer with DISC; until then, and for good if the
    /// link is cut or reset, it is NAME.partial. Without --out, data goes
    /// to standard output (CR shown as a line end on a terminal).
    #[arg(long, value_name = "FILE|DIR")]
    pub(crate) out: Option<PathBuf>,
    /// With --out FILE: overwrite FILE if it exists.
    #[arg(long)]
    pub(crate) force: bool,
    /// Exit after the first connection is released.
    #[arg(long)]
    pub(crate) once: bool,
    /// Keyboard to keyboard: answer one caller, show what it sends (CR as
    /// a line end) and send each line typed, with the `~` escapes of
    /// `connect`; exit when the link is released.
    #[arg(long)]
    pub(crate) chat: bool,
}

#[derive(Args)]
pub struct SendArgs {
    #[command(flatten)]
    pub(crate) common: LinkCommon,
    /// The station to send to.
    #[arg(long, value_name = "CALL")]
    pub(crate) to: Address,
    /// Digipeaters to go through, in order (comma separated).
    #[arg(long, value_name = "DIGI,...", value_delimiter = ',')]
    pub(crate) via: Vec<Address>,
    /// Connect with SABME (AX.25 v2.2, modulo 128) instead of SABM.
    #[arg(long)]
    pub(crate) mod128: bool,
    /// The file to send (`-` for standard input).
    pub(crate) file: PathBuf,
}

#[derive(Args)]
#[command(
    after_help = "At the start of a line: ~. release the link and quit; ~s FILE send a \
    file; ~r FILE receive into a new file (~r again to stop); ~? the escapes; ~~ a line starting \
    with ~. SIGINT, SIGTERM and SIGHUP release the link (DISC) before exiting 128 + the signal."
)]
pub struct ConnectArgs {
    #[command(flatten)]
    pub(crate) common: LinkCommon,
    /// Digipeaters to go through, in order (comma separated).
    #[arg(long, value_name = "DIGI,...", value_delimiter = ',')]
    pub(crate) via: Vec<Address>,
    /// Connect with SABME (AX.25 v2.2, modulo 128) instead of SABM.
    #[arg(long)]
    pub(crate) mod128: bool,
    /// The station to connect to.
    pub(crate) dest: Address,
}
