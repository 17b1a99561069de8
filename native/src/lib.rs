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

use std::fs::File;
use std::io::Read;
use std::os::raw::{c_char, c_int};
use std::slice;

/// `out` slots of [`rtlc_prove`].
const OUT_PROVEN: usize = 0;
const OUT_END: usize = 1;
const OUT_TIMES: usize = 2;
const OUT_BACKS: usize = 3;
const OUT_WHY: usize = 4;
const OUT_LEN: usize = 5;
const OUT_PINS: usize = 6;
const OUT_SLOTS: usize = 7;

/// Why a line ended the run (for tests and tracing; never shown as a verdict).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i64)]
enum Why {
    None = 0,
    Json = 1,
    Strict = 2,
    Deep = 3,
    Seq = 4,
    RunId = 5,
    Kind = 6,
    Version = 7,
    Payload = 8,
    Parent = 9,
    Ts = 10,
    CallId = 11,
    Big = 12,
    Limit = 13,
}

/// What the envelope's fields are, as byte ranges of the line.
#[derive(Default)]
struct Facts {
    seq: Option<(usize, usize)>,
    run_id: Option<(usize, usize)>,
    kind: Option<(usize, usize)>,
    ts: Option<(usize, usize)>,
    call_id: Option<(usize, usize)>,
    payload: bool,
    /// The payload has a `receipt_sha256` (its call's receipt is read).
    pinned: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Top,
    Payload,
    Inner,
}

struct Line<'a> {
    b: &'a [u8],
    i: usize,
    max_depth: usize,
    /// Keys of the objects being read, innermost last (each object's from its base).
    keys: Vec<(usize, usize)>,
    facts: Facts,
}

type Step<T> = Result<T, Why>;

#[inline]
fn is_digit(c: u8) -> bool {
    c.is_ascii_digit()
}

fn hex4(b: &[u8], at: usize) -> Step<u32> {
    if at + 4 > b.len() {
        return Err(Why::Json);
    }
    let mut v = 0u32;
    for &c in &b[at..at + 4] {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return Err(Why::Json),
        };
        v = v * 16 + d as u32;
    }
    Ok(v)
}

impl<'a> Line<'a> {
    fn new(b: &'a [u8], max_depth: usize, keys: Vec<(usize, usize)>) -> Self {
        Line { b, i: 0, max_depth, keys, facts: Facts::default() }
    }

    #[inline]
    fn ws(&mut self) {
        while self.i < self.b.len() {
            match self.b[self.i] {
                b' ' | b'\t' | b'\r' | b'\n' => self.i += 1,
                _ => return,
            }
        }
    }

    #[inline]
    fn peek(&self) -> Step<u8> {
        self.b.get(self.i).copied().ok_or(Why::Json)
    }

    /// A string from its opening quote: its contents' range, and whether
    /// it has an escape.
    fn string(&mut self) -> Step<(usize, usize, bool)> {
        let b = self.b;
        self.i += 1;
        let start = self.i;
        let mut escaped = false;
        loop {
            let c = *b.get(self.i).ok_or(Why::Json)?;
            match c {
                b'"' => {
                    let end = self.i;
                    self.i += 1;
                    return Ok((start, end, escaped));
                }
                b'\\' => {
                    escaped = true;
                    let e = *b.get(self.i + 1).ok_or(Why::Json)?;
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                        b'u' => {
                            let unit = hex4(b, self.i + 2)?;
                            self.i += 6;
                            if (0xD800..=0xDBFF).contains(&unit) {
                                // a high surrogate: only with its low one
                                if b.get(self.i) != Some(&b'\\') || b.get(self.i + 1) != Some(&b'u') {
                                    return Err(Why::Json);
                                }
                                let low = hex4(b, self.i + 2)?;
                                if !(0xDC00..=0xDFFF).contains(&low) {
                                    return Err(Why::Json);
                                }
                                self.i += 6;
                            } else if (0xDC00..=0xDFFF).contains(&unit) {
                                return Err(Why::Json);
                            }
                        }
                        _ => return Err(Why::Json),
                    }
                }
                0..=0x1f => return Err(Why::Json),
                _ => self.i += 1,
            }
        }
    }

    /// One digit or more (none: not JSON).
    fn digits(&mut self) -> Step<()> {
        let b = self.b;
        if !b.get(self.i).map_or(false, |c| is_digit(*c)) {
            return Err(Why::Json);
        }
        while self.i < b.len() && is_digit(b[self.i]) {
            self.i += 1;
        }
        Ok(())
    }

    /// A number; whether it is an integer (no fraction, no exponent).
    fn number(&mut self) -> Step<bool> {
        let b = self.b;
        let start = self.i;
        let negative = b[self.i] == b'-';
        if negative {
            self.i += 1;
        }
        if b.get(self.i) == Some(&b'0') {
            self.i += 1;
        } else {
            self.digits()?;
        }
        let int_end = self.i;
        let mut float = false;
        if b.get(self.i) == Some(&b'.') {
            self.i += 1;
            self.digits()?;
            float = true;
        }
        if matches!(b.get(self.i), Some(b'e') | Some(b'E')) {
            self.i += 1;
            if matches!(b.get(self.i), Some(b'+') | Some(b'-')) {
                self.i += 1;
            }
            self.digits()?;
            float = true;
        }
        if float {
            // past a double's range, orjson refuses it: the per-line reading says so
            let text = std::str::from_utf8(&b[start..self.i]).map_err(|_| Why::Json)?;
            let value: f64 = text.parse().map_err(|_| Why::Json)?;
            if !value.is_finite() {
                return Err(Why::Strict);
            }
            return Ok(false);
        }
        let digits = &b[start + negative as usize..int_end];
        if digits.len() > 20 {
            return Err(Why::Strict);
        }
        let mut value: u128 = 0;
        for &c in digits {
            value = value * 10 + (c - b'0') as u128;
        }
        // what orjson writes itself: -2**63 to 2**64-1 (wider is read exactly, slowly)
        let fits = if negative { value <= 1u128 << 63 } else { value <= u64::MAX as u128 };
        if !fits {
            return Err(Why::Strict);
        }
        Ok(true)
    }

    fn literal(&mut self, word: &[u8]) -> Step<()> {
        if self.b.len() - self.i >= word.len() && &self.b[self.i..self.i + word.len()] == word {
            self.i += word.len();
            Ok(())
        } else {
            Err(Why::Json)
        }
    }

    fn value(&mut self, depth: usize) -> Step<()> {
        match self.peek()? {
            b'{' => self.object(depth + 1, Role::Inner),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(|_| ()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number().map(|_| ()),
            _ => Err(Why::Json),
        }
    }

    fn array(&mut self, depth: usize) -> Step<()> {
        if depth > self.max_depth {
            return Err(Why::Deep);
        }
        self.i += 1;
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.value(depth)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b']' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Why::Json),
            }
        }
    }

    /// A string value with no escape (a field the envelope compares as bytes).
    fn plain_string(&mut self, why: Why) -> Step<(usize, usize)> {
        if self.peek()? != b'"' {
            return Err(why);
        }
        let (start, end, escaped) = self.string()?;
        if escaped {
            return Err(why);
        }
        Ok((start, end))
    }

    fn member(&mut self, role: Role, key: &[u8], depth: usize) -> Step<()> {
        match role {
            Role::Top => match key {
                b"seq" => {
                    let start = self.i;
                    if !matches!(self.peek()?, b'0'..=b'9') || !self.number()? {
                        return Err(Why::Seq);
                    }
                    self.facts.seq = Some((start, self.i));
                    Ok(())
                }
                b"run_id" => {
                    self.facts.run_id = Some(self.plain_string(Why::RunId)?);
                    Ok(())
                }
                b"kind" => {
                    self.facts.kind = Some(self.plain_string(Why::Kind)?);
                    Ok(())
                }
                b"ts" => {
                    self.facts.ts = Some(self.plain_string(Why::Ts)?);
                    Ok(())
                }
                b"v" => {
                    let start = self.i;
                    if self.peek()? != b'1' || !self.number()? || self.i != start + 1 {
                        return Err(Why::Version);
                    }
                    Ok(())
                }
                b"payload" => {
                    if self.peek()? != b'{' {
                        return Err(Why::Payload);
                    }
                    self.facts.payload = true;
                    self.object(depth + 1, Role::Payload)
                }
                b"parent_seq" => Err(Why::Parent),
                _ => self.value(depth),
            },
            Role::Payload if key == b"call_id" => {
                let (start, end) = self.plain_string(Why::CallId)?;
                if !call_id_ok(&self.b[start..end]) {
                    return Err(Why::CallId);
                }
                self.facts.call_id = Some((start, end));
                Ok(())
            }
            Role::Payload if key == b"receipt_sha256" => {
                self.facts.pinned = true;
                self.value(depth)
            }
            _ => self.value(depth),
        }
    }

    fn object(&mut self, depth: usize, role: Role) -> Step<()> {
        if depth > self.max_depth {
            return Err(Why::Deep);
        }
        self.i += 1;
        let base = self.keys.len();
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Ok(());
        }
        loop {
            if self.peek()? != b'"' {
                return Err(Why::Json);
            }
            let (start, end, escaped) = self.string()?;
            if escaped {
                return Err(Why::Strict); // "a" and "\u0061" are one key: the exact reading tells
            }
            self.keys.push((start, end));
            self.ws();
            if self.peek()? != b':' {
                return Err(Why::Json);
            }
            self.i += 1;
            self.ws();
            let b = self.b;
            self.member(role, &b[start..end], depth)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b'}' => {
                    self.i += 1;
                    break;
                }
                _ => return Err(Why::Json),
            }
        }
        let repeated = repeated_key(self.b, &self.keys[base..]);
        self.keys.truncate(base);
        if repeated {
            return Err(Why::Strict);
        }
        Ok(())
    }
}

fn repeated_key(b: &[u8], keys: &[(usize, usize)]) -> bool {
    if keys.len() <= 16 {
        for (n, &(s, e)) in keys.iter().enumerate() {
            let key = &b[s..e];
            if keys[..n].iter().any(|&(s2, e2)| &b[s2..e2] == key) {
                return true;
            }
        }
        return false;
    }
    let mut sorted: Vec<&[u8]> = keys.iter().map(|&(s, e)| &b[s..e]).collect();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[0] == w[1])
}

/// CALL_ID_PATTERN: 1 to 128 of `[A-Za-z0-9._:-]`, not starting with a dot.
fn call_id_ok(id: &[u8]) -> bool {
    if id.is_empty() || id.len() > 128 || id[0] == b'.' {
        return false;
    }
    id.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b':' | b'-'))
}

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
    let parts = (two(ts, 5), two(ts, 8), two(ts, 11), two(ts, 14), two(ts, 17));
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

/// The envelope of one line, or why it is not regular.
fn read_line<'a>(line: &'a [u8], max_depth: usize, keys: Vec<(usize, usize)>) -> (Step<Facts>, Vec<(usize, usize)>) {
    if line.first() != Some(&b'{') || std::str::from_utf8(line).is_err() {
        return (Err(Why::Json), keys);
    }
    let mut reader = Line::new(line, max_depth, keys);
    let mut read = reader.object(1, Role::Top);
    if read.is_ok() {
        reader.ws();
        if reader.i != line.len() {
            read = Err(Why::Json);
        }
    }
    let mut keys = reader.keys;
    keys.clear();
    (read.map(|_| reader.facts), keys)
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
/// Writes to `out` (7 slots): lines proven, the byte offset where they end,
/// 1 if each has a `ts` (0: none has), how many indexes (from `start`'s
/// line) of a `ts` earlier than the line before's were written to `backs`
/// (room for `max_lines`), why the next line is not proven, the `ts`
/// length, and how many lines pin a receipt (`payload.receipt_sha256`
/// beside a `payload.call_id`): for each, its index (from `start`'s line)
/// and the byte range of its call id in `pins` (room for `3 * max_lines`).
/// Returns the lines proven.
///
/// # Safety
/// The pointers must be valid for the lengths given: `backs` for
/// `max_lines` u32, `pins` for `3 * max_lines` i64, `out` for seven i64.
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
) -> i64 {
    let buf = slice::from_raw_parts(buf, len);
    let kinds = slice::from_raw_parts(kinds, kinds_len);
    let known: Vec<&[u8]> = kinds.split(|c| *c == b'\n').filter(|k| !k.is_empty()).collect();
    let backs = slice::from_raw_parts_mut(backs, max_lines);
    let out = slice::from_raw_parts_mut(out, OUT_SLOTS);
    let pins = slice::from_raw_parts_mut(pins, 3 * max_lines);
    let mut n_pins = 0usize;
    let given_run: Option<&[u8]> = if run_id_len < 0 {
        None
    } else {
        Some(slice::from_raw_parts(run_id, run_id_len as usize))
    };
    let mut run: Option<&[u8]> = given_run;
    let mut proven: usize = 0;
    let mut at = start;
    let mut times: Option<bool> = None;
    let mut ts_len = 0usize;
    let mut previous_ts: &[u8] = &[];
    let mut n_backs = 0usize;
    let mut why = Why::None;
    let mut keys: Vec<(usize, usize)> = Vec::with_capacity(64);
    while at < len {
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
    out[OUT_LEN] = ts_len as i64;
    out[OUT_PINS] = n_pins as i64;
    proven as i64
}

#[cfg(target_os = "linux")]
extern "C" {
    fn openat(dirfd: c_int, pathname: *const c_char, flags: c_int, ...) -> c_int;
}

/// `O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`, as Linux spells them
/// here (None elsewhere: the caller reads the files itself).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
const OPEN_FLAGS: Option<c_int> = Some(0o400000 | 0o4000 | 0o2000000);
#[cfg(all(target_os = "linux", any(target_arch = "aarch64", target_arch = "arm")))]
const OPEN_FLAGS: Option<c_int> = Some(0o100000 | 0o4000 | 0o2000000);
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "arm")
)))]
const OPEN_FLAGS: Option<c_int> = None;

/// Files read by [`rtlc_read_files`]: their bytes one after another.
pub struct Files {
    data: Vec<u8>,
}

#[cfg(target_os = "linux")]
unsafe fn open_in(dir_fd: c_int, name: &[u8], flags: c_int) -> Option<File> {
    use std::os::unix::io::FromRawFd;
    let mut path = Vec::with_capacity(name.len() + 1);
    path.extend_from_slice(name);
    path.push(0);
    let fd = openat(dir_fd, path.as_ptr() as *const c_char, flags);
    if fd < 0 {
        None
    } else {
        Some(File::from_raw_fd(fd))
    }
}

#[cfg(not(target_os = "linux"))]
unsafe fn open_in(_dir_fd: c_int, _name: &[u8], _flags: c_int) -> Option<File> {
    None
}

/// Read the regular files `names` (each followed by `\n`) in the folder
/// open as `dir_fd`, never through a symlink, each at most `max_size`
/// bytes. For each, `meta` gets two i64: its length and its offset in the
/// bytes returned, or -1 and 0 where it cannot be read so (absent, a
/// symlink, not a regular file, too big, an error: the caller reads that
/// one itself, for the exact message). Returns the bytes (free them with
/// [`rtlc_free_files`]; [`rtlc_files_data`] and [`rtlc_files_len`] give
/// them), or null where files cannot be read here at all.
///
/// # Safety
/// `names` must be valid for `names_len` bytes, `meta` for two i64 a name.
#[no_mangle]
pub unsafe extern "C" fn rtlc_read_files(
    dir_fd: c_int,
    names: *const u8,
    names_len: usize,
    max_size: u64,
    meta: *mut i64,
) -> *mut Files {
    let flags = match OPEN_FLAGS {
        Some(f) => f,
        None => return std::ptr::null_mut(),
    };
    let names = slice::from_raw_parts(names, names_len);
    let count = names.iter().filter(|c| **c == b'\n').count();
    let meta = slice::from_raw_parts_mut(meta, 2 * count);
    let mut data: Vec<u8> = Vec::new();
    for (n, name) in names.split(|c| *c == b'\n').take(count).enumerate() {
        meta[2 * n] = -1;
        meta[2 * n + 1] = 0;
        let mut file = match open_in(dir_fd, name, flags) {
            Some(f) => f,
            None => continue,
        };
        let size = match file.metadata() {
            Ok(m) if m.is_file() && m.len() <= max_size => m.len(),
            _ => continue,
        };
        let at = data.len();
        // the size it has and one byte more: a short read of a regular file
        // is its end; a full one, it grew meanwhile: read on to its end
        data.resize(at + size as usize + 1, 0);
        let got = match file.read(&mut data[at..]) {
            Ok(got) => got,
            Err(_) => {
                data.truncate(at);
                continue;
            }
        };
        data.truncate(at + got);
        if got as u64 > size && file.read_to_end(&mut data).is_err() {
            data.truncate(at);
            continue;
        }
        if (data.len() - at) as u64 > max_size {
            data.truncate(at);
            continue;
        }
        meta[2 * n] = (data.len() - at) as i64;
        meta[2 * n + 1] = at as i64;
    }
    Box::into_raw(Box::new(Files { data }))
}

/// The bytes of files read by [`rtlc_read_files`].
///
/// # Safety
/// `files` must come from [`rtlc_read_files`] and not be freed.
#[no_mangle]
pub unsafe extern "C" fn rtlc_files_data(files: *const Files) -> *const u8 {
    (*files).data.as_ptr()
}

/// How many bytes [`rtlc_files_data`] gives.
///
/// # Safety
/// As [`rtlc_files_data`].
#[no_mangle]
pub unsafe extern "C" fn rtlc_files_len(files: *const Files) -> usize {
    (*files).data.len()
}

/// Free what [`rtlc_read_files`] returned.
///
/// # Safety
/// `files` must come from [`rtlc_read_files`], freed once.
#[no_mangle]
pub unsafe extern "C" fn rtlc_free_files(files: *mut Files) {
    if !files.is_null() {
        drop(Box::from_raw(files));
    }
}

/// The library's interface version: the Python side refuses another.
#[no_mangle]
pub extern "C" fn rtlc_version() -> i64 {
    2
}
