//! The JSON values the native `agent_run` rules read and write: numbers as
//! Python holds them (an int of 64 bits or a double), texts without an
//! escape, and the words of a phase and a call's status.

pub(super) const NULL: &[u8] = b"null";

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    pub(super) fn add(self, other: Num) -> Option<Num> {
        let sum = match (self, other) {
            (Num::Int(a), Num::Int(b)) => return a.checked_add(b).map(Num::Int),
            (Num::Int(a), Num::Float(b)) => a as f64 + b,
            (Num::Float(a), Num::Int(b)) => a + b as f64,
            (Num::Float(a), Num::Float(b)) => a + b,
        };
        if sum.is_finite() {
            Some(Num::Float(sum))
        } else {
            None // not JSON: the Python rules' state says so
        }
    }

    /// `self > other`, exactly as Python compares an int and a float.
    pub(super) fn above(self, other: Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a > b,
            (Num::Float(a), Num::Float(b)) => a > b,
            (Num::Int(a), Num::Float(b)) => int_cmp_float(a, b) == std::cmp::Ordering::Greater,
            (Num::Float(a), Num::Int(b)) => int_cmp_float(b, a) == std::cmp::Ordering::Less,
        }
    }

    pub(super) fn negative(self) -> bool {
        match self {
            Num::Int(a) => a < 0,
            Num::Float(a) => a < 0.0,
        }
    }

    pub(super) fn write(self, out: &mut Vec<u8>) {
        match self {
            Num::Int(a) => out.extend_from_slice(a.to_string().as_bytes()),
            // Debug: the shortest text that reads back as the same double,
            // always with a `.` or an exponent (read back as a float)
            Num::Float(a) => out.extend_from_slice(format!("{:?}", a).as_bytes()),
        }
    }
}

/// An int against a finite float, exactly.
pub(super) fn int_cmp_float(a: i64, b: f64) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if b >= 9.3e18 {
        return Ordering::Less;
    }
    if b <= -9.3e18 {
        return Ordering::Greater;
    }
    let whole = b.trunc();
    let w = whole as i128; // exact: |b| < 2**64
    match (a as i128).cmp(&w) {
        Ordering::Equal if b > whole => Ordering::Less,
        Ordering::Equal if b < whole => Ordering::Greater,
        other => other,
    }
}

/// A JSON number's text as an int (no fraction, no exponent, within 64 bits).
pub(super) fn int_of(raw: &[u8]) -> Option<i64> {
    let (negative, digits) = match raw.first() {
        Some(b'-') => (true, &raw[1..]),
        _ => (false, raw),
    };
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i128 = 0;
    for &c in digits {
        v = v * 10 + (c - b'0') as i128;
    }
    i64::try_from(if negative { -v } else { v }).ok()
}

/// A JSON number's text as an int or a float (None: not a number, or an
/// int past 64 bits).
pub(super) fn num_of(raw: &[u8]) -> Option<Num> {
    match raw.first() {
        Some(b'-') | Some(b'0'..=b'9') => {}
        _ => return None,
    }
    if raw.iter().any(|c| matches!(c, b'.' | b'e' | b'E')) {
        let value: f64 = std::str::from_utf8(raw).ok()?.parse().ok()?;
        value.is_finite().then_some(Num::Float(value))
    } else {
        int_of(raw).map(Num::Int)
    }
}

/// A JSON `true` or `false`.
pub(super) fn bool_of(raw: &[u8]) -> Option<bool> {
    match raw {
        b"true" => Some(true),
        b"false" => Some(false),
        _ => None,
    }
}

/// A JSON string's contents where it has no escape (None: not a string, or one with one).
pub(super) fn plain_text(raw: &[u8]) -> Option<&[u8]> {
    if raw.len() >= 2 && raw[0] == b'"' && raw[raw.len() - 1] == b'"' {
        let inner = &raw[1..raw.len() - 1];
        (!inner.contains(&b'\\')).then_some(inner)
    } else {
        None
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    New,
    Running,
    Retrying,
    Succeeded,
    Failed,
}

pub(super) const PHASES: [(&[u8], Phase); 5] = [
    (b"new", Phase::New),
    (b"running", Phase::Running),
    (b"retrying", Phase::Retrying),
    (b"succeeded", Phase::Succeeded),
    (b"failed", Phase::Failed),
];

/// The word for `value` in `table` (every value has one).
fn name_in<T: Copy + PartialEq>(table: &[(&'static [u8], T)], value: T) -> &'static [u8] {
    table
        .iter()
        .find(|(_, v)| *v == value)
        .map(|(n, _)| *n)
        .unwrap_or(b"")
}

/// The value `name` is the word for in `table`.
fn value_in<T: Copy>(table: &[(&[u8], T)], name: &[u8]) -> Option<T> {
    table.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

impl Phase {
    pub(super) fn name(self) -> &'static [u8] {
        name_in(&PHASES, self)
    }
    pub(super) fn of(name: &[u8]) -> Option<Phase> {
        value_in(&PHASES, name)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    Proposed,
    Allowed,
    Denied,
    Started,
    Finished,
}

pub(super) const STATUSES: [(&[u8], Status); 5] = [
    (b"proposed", Status::Proposed),
    (b"allowed", Status::Allowed),
    (b"denied", Status::Denied),
    (b"started", Status::Started),
    (b"finished", Status::Finished),
];

impl Status {
    pub(super) fn name(self) -> &'static [u8] {
        name_in(&STATUSES, self)
    }
    pub(super) fn of(name: &[u8]) -> Option<Status> {
        value_in(&STATUSES, name)
    }
}
