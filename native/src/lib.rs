//! replay-tui's line core: the envelope checks of a chunk of ledger lines
//! (spec sections 2-3), in one pass over its bytes, with no Python object
//! made and the interpreter's lock let go (ctypes releases it for the call).
//!
//! It proves the longest run of lines from a byte offset that are regular:
//! each line one JSON object a careful reader takes as it is (no repeated
//! key at any depth, no integer past 64 bits, no number past a double, no
//! lone surrogate, UTF-8, nested less than the reader's limit), with `seq`
//! the next integer, `run_id` the run's, `kind` one the rules know, `v` 1
//! where given, `payload` an object, no `parent_seq`, `ts` on every line of
//! the run or on none, all `YYYY-MM-DDTHH:MM:SS[.f]Z` of one length on real
//! days, and a `payload.call_id` of the form the spec allows where given.
//! A `ts` earlier than the line before does not end the run: its index is
//! written out (a warning the caller gives). Anything else ends the run;
//! the caller judges that line alone, with the messages the Python checks
//! give, and asks again from the next. So the core never finds a line bad:
//! it only finds lines good faster, by the same rules.

mod files;
mod line;
mod rules;
mod sha256;

use std::slice;

use line::{is_digit, read_line, Facts, Why};

pub use files::{rtlc_files_data, rtlc_files_len, rtlc_free_files, rtlc_read_files, Files};
pub use rules::{rtar_apply_line, rtar_free, rtar_new, rtar_prove_apply, rtar_state, AgentRun};
pub use sha256::rtlc_sha256;

/// `out` slots of [`rtlc_prove`].
const OUT_PROVEN: usize = 0;
const OUT_END: usize = 1;
const OUT_TIMES: usize = 2;
const OUT_BACKS: usize = 3;
const OUT_WHY: usize = 4;
const OUT_PINS: usize = 5;
const OUT_SLOTS: usize = 6;

fn two(b: &[u8], at: usize) -> Option<u32> {
    if is_digit(b[at]) && is_digit(b[at + 1]) {
        Some((b[at] - b'0') as u32 * 10 + (b[at + 1] - b'0') as u32)
    } else {
        None
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.f]Z` on a real day (years 1 to 9999, as Python's
/// `date` takes them), hours, minutes and seconds in range.
fn utc_time_ok(ts: &[u8]) -> bool {
    let n = ts.len();
    if n < 20 || ts[4] != b'-' || ts[7] != b'-' || ts[10] != b'T' || ts[13] != b':' {
        return false;
    }
    if ts[16] != b':' || ts[n - 1] != b'Z' {
        return false;
    }
    if n > 20 && (ts[19] != b'.' || n < 22 || !ts[20..n - 1].iter().all(|c| is_digit(*c))) {
        return false;
    }
    let (hi, lo) = match (two(ts, 0), two(ts, 2)) {
        (Some(hi), Some(lo)) => (hi, lo),
        _ => return false,
    };
    let year = hi * 100 + lo;
    let parts = (
        two(ts, 5),
        two(ts, 8),
        two(ts, 11),
        two(ts, 14),
        two(ts, 17),
    );
    let (month, day, hour, minute, second) = match parts {
        (Some(a), Some(b), Some(c), Some(d), Some(e)) => (a, b, c, d, e),
        _ => return false,
    };
    if year == 0 || !(1..=12).contains(&month) || hour > 23 || minute > 59 || second > 59 {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&day)
}

/// Days from 1970-01-01 to a day of the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since the epoch of a `ts` that [`utc_time_ok`] accepts, as the
/// Python reader gives them (`ts_seconds`: whole seconds, then the
/// fraction's text read as a double and added).
fn utc_seconds(ts: &[u8]) -> f64 {
    let n = ts.len();
    let num = |at: usize| (two(ts, at).unwrap_or(0)) as i64;
    let year = num(0) * 100 + num(2);
    let whole =
        days_from_civil(year, num(5), num(8)) * 86_400 + num(11) * 3_600 + num(14) * 60 + num(17);
    if n > 20 {
        let frac = std::str::from_utf8(&ts[19..n - 1])
            .ok()
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0);
        whole as f64 + frac
    } else {
        whole as f64
    }
}

fn digits_value(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in b {
        v = v * 10 + (c - b'0') as i64;
    }
    Some(v)
}

/// Prove lines of `buf` regular, from byte `start` (a line's start), each
/// ending in `\n`: at most `max_lines`, none of `max_len` bytes or more
/// (0: no limit). `first_seq` is the seq the first must have; `run_id`
/// (`run_id_len` < 0: not known yet, the first line's then) the run's;
/// `kinds` the kinds the rules know, each followed by `\n`.
///
/// Writes to `out` (6 slots): lines proven, the byte offset where they end,
/// 1 if each has a `ts` (0: none has), how many indexes (from `start`'s
/// line) of a `ts` earlier than the line before's were written to `backs`
/// (room for `max_lines`), why the next line is not proven, and how many
/// lines pin a receipt (`payload.receipt_sha256`
/// beside a `payload.call_id`): for each, its index (from `start`'s line)
/// and the byte range of its call id in `pins` (room for `3 * max_lines`).
/// Where `seconds` is not null (room for `max_lines`), each proven line's
/// `ts` in seconds since the epoch, as the Python reader reads it.
/// Returns the lines proven.
///
/// # Safety
/// The pointers must be valid for the lengths given: `backs` for
/// `max_lines` u32, `pins` for `3 * max_lines` i64, `out` for six i64,
/// `seconds` (unless null) for `max_lines` f64.
#[no_mangle]
pub unsafe extern "C" fn rtlc_prove(
    buf: *const u8,
    len: usize,
    start: usize,
    first_seq: i64,
    run_id: *const u8,
    run_id_len: isize,
    kinds: *const u8,
    kinds_len: usize,
    max_depth: usize,
    max_lines: usize,
    max_len: usize,
    backs: *mut u32,
    pins: *mut i64,
    out: *mut i64,
    seconds: *mut f64,
) -> i64 {
    let ask = Asked::new(
        buf, len, start, first_seq, run_id, run_id_len, kinds, kinds_len, max_depth, max_lines,
        max_len,
    );
    ask.prove(backs, pins, out, seconds, |_, _, _, _| true)
}

/// What a caller asks [`rtlc_prove`] (or the native rules) to prove.
pub(crate) struct Asked<'a> {
    buf: &'a [u8],
    start: usize,
    first_seq: i64,
    run: Option<&'a [u8]>,
    known: Vec<&'a [u8]>,
    max_depth: usize,
    max_lines: usize,
    max_len: usize,
}

impl<'a> Asked<'a> {
    /// The arguments of [`rtlc_prove`], read.
    ///
    /// # Safety
    /// As [`rtlc_prove`]'s.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn new(
        buf: *const u8,
        len: usize,
        start: usize,
        first_seq: i64,
        run_id: *const u8,
        run_id_len: isize,
        kinds: *const u8,
        kinds_len: usize,
        max_depth: usize,
        max_lines: usize,
        max_len: usize,
    ) -> Asked<'a> {
        let kinds = slice::from_raw_parts(kinds, kinds_len);
        Asked {
            buf: slice::from_raw_parts(buf, len),
            start,
            first_seq,
            run: if run_id_len < 0 {
                None
            } else {
                Some(slice::from_raw_parts(run_id, run_id_len as usize))
            },
            known: kinds
                .split(|c| *c == b'\n')
                .filter(|k| !k.is_empty())
                .collect(),
            max_depth,
            max_lines,
            max_len,
        }
    }

    /// The bytes asked about.
    pub(crate) fn buf(&self) -> &'a [u8] {
        self.buf
    }

    /// Prove lines as [`rtlc_prove`] says, calling `each` with every line
    /// proven (its byte offset, its bytes, its facts, its index from the
    /// first): where it returns false, that line ends the run (`Why::Rules`).
    ///
    /// # Safety
    /// As [`rtlc_prove`]'s.
    pub(crate) unsafe fn prove(
        &self,
        backs: *mut u32,
        pins: *mut i64,
        out: *mut i64,
        seconds: *mut f64,
        mut each: impl FnMut(usize, &'a [u8], &Facts, usize) -> bool,
    ) -> i64 {
        let buf = self.buf;
        let (max_lines, max_len, max_depth, first_seq) =
            (self.max_lines, self.max_len, self.max_depth, self.first_seq);
        let known = &self.known;
        let backs = slice::from_raw_parts_mut(backs, max_lines);
        let out = slice::from_raw_parts_mut(out, OUT_SLOTS);
        let pins = slice::from_raw_parts_mut(pins, 3 * max_lines);
        let mut seconds: Option<&mut [f64]> = if seconds.is_null() {
            None
        } else {
            Some(slice::from_raw_parts_mut(seconds, max_lines))
        };
        let mut n_pins = 0usize;
        let mut run: Option<&[u8]> = self.run;
        let mut proven: usize = 0;
        let mut at = self.start;
        let mut times: Option<bool> = None;
        let mut ts_len = 0usize;
        let mut previous_ts: &[u8] = &[];
        let mut n_backs = 0usize;
        let mut why = Why::None;
        let mut keys: Vec<(usize, usize)> = Vec::with_capacity(64);
        while at < buf.len() {
            if proven == max_lines {
                why = Why::Limit;
                break;
            }
            let end = match buf[at..].iter().position(|c| *c == b'\n') {
                Some(p) => at + p,
                None => break,
            };
            let line = &buf[at..end];
            if max_len != 0 && line.len() >= max_len {
                why = Why::Big;
                break;
            }
            let (read, back) = read_line(line, max_depth, keys);
            keys = back;
            let facts = match read {
                Ok(f) => f,
                Err(w) => {
                    why = w;
                    break;
                }
            };
            let seq_ok = match facts.seq {
                Some((s, e)) => digits_value(&line[s..e]) == Some(first_seq + proven as i64),
                None => false,
            };
            if !seq_ok {
                why = Why::Seq;
                break;
            }
            let this_run = match facts.run_id {
                Some((s, e)) if e > s => &line[s..e],
                _ => {
                    why = Why::RunId;
                    break;
                }
            };
            match run {
                Some(r) if r != this_run => {
                    why = Why::RunId;
                    break;
                }
                Some(_) => {}
                None => run = Some(this_run),
            }
            let kind_ok = match facts.kind {
                Some((s, e)) => known.iter().any(|k| *k == &line[s..e]),
                None => false,
            };
            if !kind_ok {
                why = Why::Kind;
                break;
            }
            if !facts.payload {
                why = Why::Payload;
                break;
            }
            let ts = facts.ts.map(|(s, e)| &line[s..e]);
            match (times, ts) {
                (None, Some(t)) => {
                    times = Some(true);
                    ts_len = t.len();
                }
                (None, None) => times = Some(false),
                (Some(true), Some(t)) if t.len() == ts_len => {}
                (Some(false), None) => {}
                _ => {
                    why = Why::Ts;
                    break;
                }
            }
            if let Some(t) = ts {
                if !utc_time_ok(t) {
                    why = Why::Ts;
                    break;
                }
                // one form and length: text order is time order
                if proven > 0 && t < previous_ts {
                    backs[n_backs] = proven as u32;
                    n_backs += 1;
                }
                previous_ts = t;
                if let Some(room) = seconds.as_deref_mut() {
                    room[proven] = utc_seconds(t);
                }
            }
            if !each(at, line, &facts, proven) {
                why = Why::Rules;
                if n_backs > 0 && backs[n_backs - 1] as usize == proven {
                    n_backs -= 1; // (the line is not proven: its time is not said)
                }
                break;
            }
            if let (true, Some((s, e))) = (facts.pinned, facts.call_id) {
                pins[3 * n_pins] = proven as i64;
                pins[3 * n_pins + 1] = (at + s) as i64;
                pins[3 * n_pins + 2] = (at + e) as i64;
                n_pins += 1;
            }
            proven += 1;
            at = end + 1;
        }
        out[OUT_PROVEN] = proven as i64;
        out[OUT_END] = at as i64;
        out[OUT_TIMES] = if times == Some(true) { 1 } else { 0 };
        out[OUT_BACKS] = n_backs as i64;
        out[OUT_WHY] = why as i64;
        out[OUT_PINS] = n_pins as i64;
        proven as i64
    }
}

/// The library's interface version: the Python side refuses another.
#[no_mangle]
pub extern "C" fn rtlc_version() -> i64 {
    7
}
