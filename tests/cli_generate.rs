//! `linklab generate`, the package's build step (dist/build-deb.sh): a
//! manual page for every command `--help` lists, at every depth, and
//! completion scripts for bash, zsh and fish, all made from the command
//! line's own definitions, so they name its real options; the hidden
//! `generate` itself shows in none of them.

mod cli;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use cli::{finish, linklab, text};

/// Runs `linklab ARGS` to its end; its standard output, failing on a
/// non-zero exit.
fn run(args: &[&str]) -> String {
    let out = finish(linklab(args), &format!("linklab {}", args.join(" ")));
    assert!(
        out.status.success(),
        "linklab {}: {}",
        args.join(" "),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The subcommands `linklab PATH --help` lists under "Commands:", less
/// `help`.
fn listed_subcommands(path: &[String]) -> Vec<String> {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let help = run(&args);
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The page names `--help` implies: `linklab.1`, and for each command
/// listed at any depth, its path joined by dashes (`linklab-ip-tun.1`).
fn pages_from_help(path: &mut Vec<String>, pages: &mut BTreeSet<String>) {
    let name = std::iter::once("linklab")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("-");
    pages.insert(format!("{name}.1"));
    for sub in listed_subcommands(path) {
        path.push(sub);
        pages_from_help(path, pages);
        path.pop();
    }
}

fn file_names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect()
}

#[test]
fn a_manual_page_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man1");
    let stdout = run(&["generate", "man", man.to_str().unwrap()]);

    let mut expected = BTreeSet::new();
    pages_from_help(&mut Vec::new(), &mut expected);
    // The station's pages at least, and a nested one.
    for page in [
        "linklab.1",
        "linklab-station.1",
        "linklab-status.1",
        "linklab-ip-tun.1",
    ] {
        assert!(expected.contains(page), "--help lists no {page}");
    }
    assert_eq!(file_names(&man), expected);
    // Standard output names each file written, once.
    let printed: BTreeSet<String> = stdout
        .lines()
        .map(|l| {
            let path = Path::new(l);
            assert_eq!(path.parent(), Some(man.as_path()), "{l}");
            path.file_name().unwrap().to_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(printed, expected);
    assert_eq!(stdout.lines().count(), expected.len());

    let station = std::fs::read_to_string(man.join("linklab-station.1")).unwrap();
    // roff, titled with the page's name and section.
    assert!(station.contains("\n.TH linklab-station 1 "), "{station}");
    assert!(
        station.contains("\n.SH NAME\nlinklab\\-station \\- "),
        "{station}"
    );
    // Its options, from the arguments `linklab station` parses; roff
    // writes a dash as `\-`.
    for option in ["config", "check"] {
        assert!(
            station.contains(&format!("\\-\\-{option}")),
            "no --{option} in the page:\n{station}"
        );
    }
    assert!(station.contains("/etc/linklab/station.toml"), "{station}");
    // The top page refers to each subcommand's page, and `generate` is
    // in no page.
    let top = std::fs::read_to_string(man.join("linklab.1")).unwrap();
    for sub in listed_subcommands(&[]) {
        assert!(
            top.contains(&format!("\nlinklab\\-{sub}(1)\n")),
            "no {sub}:\n{top}"
        );
    }
    for page in &expected {
        let roff = std::fs::read_to_string(man.join(page)).unwrap();
        assert!(!roff.contains("generate"), "{page} shows `generate`");
    }
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("completions");
    let stdout = run(&["generate", "completions", out.to_str().unwrap()]);
    let expected: BTreeSet<String> = ["linklab.bash", "_linklab", "linklab.fish"]
        .map(str::to_owned)
        .into();
    assert_eq!(file_names(&out), expected);
    assert_eq!(stdout.lines().count(), 3, "{stdout}");

    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    let (bash, zsh, fish) = (read("linklab.bash"), read("_linklab"), read("linklab.fish"));
    assert!(zsh.starts_with("#compdef linklab"), "{zsh}");
    assert!(fish.contains("complete -c linklab "), "{fish}");
    // Each offers the station's subcommand and its options, and not the
    // hidden `generate`.
    for (shell, script) in [("bash", &bash), ("zsh", &zsh), ("fish", &fish)] {
        assert!(script.contains("station"), "{shell}: no station");
        assert!(script.contains("config"), "{shell}: no --config");
        assert!(!script.contains("generate"), "{shell} offers `generate`");
    }
    // bash loads it and registers the completion for `linklab`.
    let bash_path = out.join("linklab.bash");
    let loaded = Command::new("bash")
        .args([
            "--norc",
            "--noprofile",
            "-c",
            "source \"$1\" && complete -p linklab",
        ])
        .arg("bash")
        .arg(&bash_path)
        .output()
        .expect("bash runs");
    assert!(loaded.status.success(), "{}", text(&loaded.stderr));
    assert!(
        text(&loaded.stdout).contains(" linklab"),
        "{}",
        text(&loaded.stdout)
    );
}

/// `generate` is not offered for a mistyped subcommand, nor listed by
/// `--help`.
#[test]
fn generate_is_hidden_from_the_public_command_line() {
    for typo in ["generat", "gen"] {
        let out = finish(linklab(&[typo]), "linklab with a mistyped subcommand");
        assert_eq!(out.status.code(), Some(2));
        let stderr = text(&out.stderr);
        assert!(stderr.contains("unrecognized subcommand"), "{stderr}");
        assert!(!stderr.contains("generate"), "{stderr}");
    }
    assert!(!run(&["--help"]).contains("generate"));
    assert!(listed_subcommands(&[]).contains(&"station".to_owned()));
}

/// A directory that cannot be made is a usage error naming it, before
/// anything is written.
#[test]
fn an_impossible_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let inside = file.join("man1");
    for what in ["man", "completions"] {
        let out = finish(
            linklab(&["generate", what, inside.to_str().unwrap()]),
            "linklab generate",
        );
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("generate {what} {}", inside.display())),
            "{stderr}"
        );
        assert!(stderr.contains("cannot create the directory"), "{stderr}");
    }
}
