//! The fast reader against the full one: whatever it reads must read the same (same
//! documents, same numbers, same values), and it must read kubectl-shaped dumps at all.

use std::path::{Path, PathBuf};

use super::check::{Reader, contract, full};
use super::documents;
use crate::benchdata::{self, Requests, Rng};
use crate::benchdress::Fields;

/// Checks `text`; returns whether the fast reader read it.
fn agrees(text: &str) -> bool {
    match contract(text) {
        Ok(r) => r == Reader::Fast,
        Err(e) => panic!("reading {}: {e}", short(text)),
    }
}

/// The text, or where it differs from the generated dump, short enough to read.
fn short(text: &str) -> String {
    if text.len() < 400 {
        return format!("{text:?}");
    }
    let docs = benchdata::manifests_yaml_with(3, 11, Requests::Ranges, Fields::Dump).unwrap();
    let list = benchdata::manifests_with(3, 11, Requests::Ranges, Fields::Dump);
    let list = yaml_serde::to_string(&list).unwrap();
    let differs = |base: &str| text.bytes().zip(base.bytes()).position(|(a, b)| a != b);
    let at = differs(&docs).max(differs(&list)).unwrap_or(0);
    let from = text.floor_char_boundary(at.saturating_sub(80));
    let to = text.floor_char_boundary((at + 80).min(text.len()));
    format!("an edited dump, near {:?}", &text[from..to])
}

#[test]
fn generated_dumps_are_read_fast_and_the_same() {
    let pods = benchdata::manifests_yaml_with(50, 7, Requests::Ranges, Fields::Dump).unwrap();
    assert!(agrees(&pods));
    let list =
        crate::benchcluster::cluster(20, 200, 7, crate::benchcluster::Mix::Mixed, Fields::Dump)
            .unwrap();
    let mut yaml = String::new();
    for o in list["items"].as_array().unwrap() {
        yaml.push_str("---\n");
        yaml.push_str(&yaml_serde::to_string(o).unwrap());
    }
    assert!(agrees(&yaml));
    // And as one `List` document, as `kubectl get -o yaml` writes it.
    assert!(agrees(&yaml_serde::to_string(&list).unwrap()));
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml")) {
            out.push(p);
        }
    }
}

#[test]
fn every_yaml_file_of_the_project_reads_the_same() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for d in [
        "examples",
        "shared/cli/tests",
        "tests/fixtures",
        "infra",
        "events",
    ] {
        if root.join(d).is_dir() {
            yaml_files(&root.join(d), &mut files);
        }
    }
    assert!(files.len() > 50, "{} files", files.len());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // Hand-written files use flow collections, left to the full reader; rewritten in
        // block style, as dump tools write, every one reads fast.
        let Some(docs) = full(&text) else { continue };
        agrees(&text);
        let mut block = String::new();
        for (_, v) in &docs {
            block.push_str("---\n");
            block.push_str(&yaml_serde::to_string(v).unwrap());
        }
        assert!(
            agrees(&block),
            "{} in block style is left to the full reader:\n{block}",
            f.display()
        );
    }
}

const SCALARS: &[&str] = &[
    "a",
    "abc def",
    "~",
    "null",
    "Null",
    "NULL",
    "true",
    "True",
    "TRUE",
    "false",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "0",
    "-0",
    "+0",
    "7",
    "-7",
    "+7",
    "007",
    "-007",
    "0x1F",
    "-0x1F",
    "0o17",
    "0b101",
    "0x",
    "+0x1",
    "0x-1",
    "1.5",
    "-1.5",
    "1e3",
    "1E-3",
    ".5",
    "5.",
    ".inf",
    "-.inf",
    ".nan",
    ".NaN",
    "inf",
    "nan",
    "infinity",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "1_000",
    "12:30",
    "2001-12-14",
    "10.0.0.1",
    "100m",
    "4Gi",
    "1.5Gi",
    "-x",
    "-",
    "?x",
    "? x",
    ":x",
    "a:b",
    "a: b",
    "a:",
    "a #b",
    "a#b",
    "http://x:80/y",
    "'q'",
    "'it''s'",
    "''",
    "'a",
    "\"d\"",
    "\"\\n\\t\\\\\\\"\"",
    "\"\\u00e9\"",
    "\"\\x41\"",
    "\"\\U0001F600\"",
    "\"\\ud800\"",
    "\"\\e\"",
    "\"a",
    "\"a\" b",
    "'a' # c",
    "\"a\" #c",
    "a # c",
    "[]",
    "{}",
    "[a]",
    "{a: b}",
    "[ ]",
    "&x a",
    "*x",
    "!!str 5",
    "!x a",
    "|",
    "|-",
    "|+",
    ">",
    "%x",
    "@x",
    "`x",
    "a\tb",
    "a \t",
    "é",
    "\"é\"",
    "@",
    "#",
];

#[test]
fn every_tricky_scalar_reads_the_same_or_is_left_to_the_full_reader() {
    for s in SCALARS {
        for text in [
            format!("k: {s}\n"),
            format!("- {s}\n"),
            format!("{s}: v\n"),
            format!("a:\n  k: {s}\n  z: 1\n"),
            format!("a:\n- {s}\n- b\n"),
        ] {
            if full(&text).is_some() {
                agrees(&text);
            } else {
                assert!(
                    documents(&text).is_none(),
                    "read what YAML refuses: {text:?}"
                );
            }
        }
    }
}

/// Keys around YAML's limit of 1024 characters for an implicit key, plain and quoted, at the
/// top and inside a sequence item.
#[test]
fn long_keys_read_the_same_or_are_left_to_the_full_reader() {
    for n in [990, 999, 1000, 1020, 1023, 1024, 1025, 1100] {
        let plain = "k".repeat(n);
        let quoted = format!("\"{}\"", "q".repeat(n));
        for key in [&plain, &quoted] {
            for text in [format!("{key}: v\n"), format!("- {key}: v\n  b: 1\n")] {
                if full(&text).is_some() {
                    agrees(&text);
                } else {
                    assert!(documents(&text).is_none(), "read a key YAML refuses: {n}");
                }
            }
        }
    }
}

const SHAPES: &[&str] = &[
    "",
    "\t\t\t",
    "\t\t\t\n",
    "a: 1\n\t\t\n",
    "a:\n\t\n  b: 1\n",
    "- a\n\t\n",
    "\t\n- a\n",
    "#\n-\t\t\n",
    "-\t\n",
    "- \t\n",
    "k:\t\n",
    "k: \t\n",
    "- a\t\n",
    "k: v\t\n",
    "a:\n  -\t\n  - b\n",
    "a:\n- b: 1\t\n",
    "# only\n",
    "---\n",
    "---\n---\n",
    "a: 1\n---\n",
    "# c\n---\na: 1\n",
    "a: 1\n---\nb: 2\n",
    "---\n# c\n---\na: 1\n",
    "--- # c\na: 1\n",
    "--- a\n",
    "--- # c\u{1}\na: 1\n",
    "--- \t# c\na: 1\n---\t\nb: 2\n",
    "----\n",
    "a: 1\n---x\n",
    "a: |\n  x\n---\nb: 1\n",
    "a:\n- ---\n",
    "a: 1\n%YAML 1.2\n",
    "a: 1\n....\n",
    "a: ...\n",
    "...\n",
    "%YAML 1.2\n---\na: 1\n",
    "a: 1\n...\n",
    "a: 1",
    "a:\n",
    "a:\nb:\n",
    "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n",
    "a:\n- 1\n- 2\nb: 3\n",
    "a:\n  - 1\n  - 2\n",
    "- a: 1\n  b: 2\n- c: 3\n",
    "-   a: 1\n    b: 2\n",
    "- - 1\n  - 2\n- 3\n",
    "-\n  a: 1\n",
    "-\n- b\n",
    "- a\n  - b\n",
    "a: 1\n  b: 2\n",
    "a: 1\n b: 2\n",
    "a: x\n  y\n",
    "a: 1\na: 2\n",
    "a: 1\n'a': 2\n",
    "a:\n  b: 1\nb:\n  b: 1\n",
    "a: |\n  x\n  y\n",
    "a: |-\n  x\n  y\nb: 1\n",
    "a: |\n  x\n\n  y\n\n\nb: 1\n",
    "a: |\n    x\n  y\n",
    "a: |\n  x\n    y\n",
    "a: |\n\n  x\n",
    "a: |\n   \n  x\n",
    "a: |\n  x\n   \n",
    "a: |\n  x",
    "a: |-\n  x",
    "a: |\nb: 1\n",
    "a: |+\n  x\n\n",
    "a: >\n  x\n  y\n",
    "a: |2\n   x\n",
    "a: | # c\n  x\n",
    "- |\n  x\n- y\n",
    "a: |\n  # not a comment\n  x\n",
    "a: |\n  x\n# c\n  y\n",
    "a: |\n  x\n# c\nb: 1\n",
    "a: |\n  x\n\ty\n",
    "a: |\n  \tx\n",
    "a:\n\tb: 1\n",
    "a: 1\n\t\n",
    "a: 1 # c\n",
    "a: 1\n  # deeper comment\nb: 2\n",
    "  a: 1\n  b: 2\n",
    "  a: 1\nb: 2\n",
    "a: 1\n- b\n",
    "- a\nb: 1\n",
    "a:\n  - b\n  c: 1\n",
    "a: b: c\n",
    "a:b\n",
    "a :  1\n",
    "\"a b\": 1\n",
    "'a''b': 1\n",
    "\"a\":1\n",
    "a:\t1\n",
    "a: [] \n",
    "a: {}\n",
    "a:\n  []\n",
    "? a\n: b\n",
    "a: &x 1\nb: *x\n",
    "<<: {a: 1}\n",
    "a: 'x\n  y'\n",
    "a: \"x\n  y\"\n",
    "a:\n  b: 1\n c: 2\n",
    "a: \u{85}\n",
    "\u{feff}a: 1\n",
    "a: 1\r\nb: 2\r\n",
    "a: \u{7}\n",
    "\"\\u0000\": 1\n",
];

#[test]
fn document_shapes_read_the_same_or_are_left_to_the_full_reader() {
    let mut fast = Vec::new();
    for text in SHAPES {
        if full(text).is_some() {
            if agrees(text) {
                fast.push(*text);
            }
        } else {
            assert!(
                documents(text).is_none(),
                "read what YAML refuses: {text:?}"
            );
        }
    }
    assert!(fast.len() >= 38, "{} shapes read fast", fast.len());
}

/// Random edits of valid dumps, as documents and as one `List`: deleting, doubling or
/// inserting a character anywhere.
#[test]
fn edited_dumps_read_the_same_or_are_left_to_the_full_reader() {
    let docs = benchdata::manifests_yaml_with(3, 11, Requests::Ranges, Fields::Dump).unwrap();
    let list = benchdata::manifests_with(3, 11, Requests::Ranges, Fields::Dump);
    let list = yaml_serde::to_string(&list).unwrap();
    let alphabet = [
        ' ', '\n', ':', '-', '#', '\'', '"', '|', '\t', 'a', '1', '[', '.',
    ];
    let mut rng = Rng::new(5);
    for round in 0..1000 {
        let base = if round % 2 == 0 { &docs } else { &list };
        let mut text: Vec<char> = base.chars().collect();
        for _ in 0..1 + rng.next_u64() % 3 {
            let at = (rng.next_u64() % text.len() as u64) as usize;
            match rng.next_u64() % 3 {
                0 => {
                    text.remove(at);
                }
                1 => text.insert(at, text[at]),
                _ => text.insert(at, *rng.pick(&alphabet)),
            }
        }
        let text: String = text.into_iter().collect();
        if full(&text).is_some() {
            agrees(&text);
        } else {
            assert!(
                documents(&text).is_none(),
                "read what YAML refuses: {}",
                short(&text)
            );
        }
    }
}
