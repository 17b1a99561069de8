//! One ledger line read as a careful reader takes it: strict JSON (no
//! repeated key at any depth, no integer past 64 bits, no number past a
//! double, no lone surrogate, UTF-8, nested less than the reader's limit)
//! and, on the way, the byte ranges of the envelope's fields.

/// Why a line ended the run (for tests and tracing; never shown as a verdict).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i64)]
pub(crate) enum Why {
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
    /// The native rules leave this line to the Python rules.
    Rules = 14,
}

/// What the envelope's fields are, as byte ranges of the line.
#[derive(Default)]
pub(crate) struct Facts {
    pub(crate) seq: Option<(usize, usize)>,
    pub(crate) run_id: Option<(usize, usize)>,
    pub(crate) kind: Option<(usize, usize)>,
    pub(crate) ts: Option<(usize, usize)>,
    pub(crate) call_id: Option<(usize, usize)>,
    pub(crate) payload: bool,
    /// The payload has a `receipt_sha256` (its call's receipt is read).
    pub(crate) pinned: bool,
    /// Byte ranges of the payload's members the built-in rules read
    /// (see [`member_of`]), each value's whole text.
    pub(crate) members: [Option<(usize, usize)>; MEMBERS],
}

/// The payload members the native `agent_run` rules read.
pub(crate) const MEMBERS: usize = 13;
pub(crate) const M_TOOL: usize = 0;
pub(crate) const M_ARGS: usize = 1;
pub(crate) const M_TOKENS: usize = 2;
pub(crate) const M_ATTEMPT: usize = 3;
pub(crate) const M_TASK: usize = 4;
pub(crate) const M_MODEL: usize = 5;
pub(crate) const M_REASON: usize = 6;
pub(crate) const M_OK: usize = 7;
pub(crate) const M_COST: usize = 8;
pub(crate) const M_SHA: usize = 9;
pub(crate) const M_PASSED: usize = 10;
pub(crate) const M_NAME: usize = 11;
pub(crate) const M_TO: usize = 12;

/// Which of [`MEMBERS`] a payload key is.
#[inline]
fn member_of(key: &[u8]) -> Option<usize> {
    Some(match key {
        b"tool" => M_TOOL,
        b"args" => M_ARGS,
        b"tokens" => M_TOKENS,
        b"attempt" => M_ATTEMPT,
        b"task" => M_TASK,
        b"model" => M_MODEL,
        b"reason" => M_REASON,
        b"ok" => M_OK,
        b"cost" => M_COST,
        b"receipt_sha256" => M_SHA,
        b"passed" => M_PASSED,
        b"name" => M_NAME,
        b"to" => M_TO,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Top,
    Payload,
    Inner,
    /// A receipt's top level: its `call_id`'s whole value is noted.
    Receipt,
}

struct Line<'a> {
    b: &'a [u8],
    i: usize,
    max_depth: usize,
    /// A `parent_seq` is read as any member (the Python checks judged it).
    parent_ok: bool,
    /// Keys of the objects being read, innermost last (each object's from its base).
    keys: Vec<(usize, usize)>,
    facts: Facts,
}

pub(crate) type Step<T> = Result<T, Why>;

#[inline]
pub(crate) fn is_digit(c: u8) -> bool {
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
        Line {
            b,
            i: 0,
            max_depth,
            parent_ok: false,
            keys,
            facts: Facts::default(),
        }
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
                                if b.get(self.i) != Some(&b'\\') || b.get(self.i + 1) != Some(&b'u')
                                {
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
        let fits = if negative {
            value <= 1u128 << 63
        } else {
            value <= u64::MAX as u128
        };
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
            if self.closed(b']')? {
                return Ok(());
            }
        }
    }

    /// After an item: a comma and more (false), or `close` (true).
    fn closed(&mut self, close: u8) -> Step<bool> {
        self.ws();
        let c = self.peek()?;
        self.i += 1;
        if c == close {
            return Ok(true);
        }
        if c != b',' {
            return Err(Why::Json);
        }
        self.ws();
        Ok(false)
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
                b"parent_seq" if !self.parent_ok => Err(Why::Parent),
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
            Role::Receipt => {
                let start = self.i;
                self.value(depth)?;
                if key == b"call_id" {
                    self.facts.call_id = Some((start, self.i));
                }
                Ok(())
            }
            Role::Payload => {
                let start = self.i;
                self.value(depth)?;
                if let Some(m) = member_of(key) {
                    self.facts.members[m] = Some((start, self.i));
                    self.facts.pinned |= m == M_SHA;
                }
                Ok(())
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
            if self.closed(b'}')? {
                break;
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
    id.iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b':' | b'-'))
}

/// The end of the JSON value at `at` of `b` (its whole text: `b[at..end]`),
/// read as strictly as a line's values; None if there is none there.
pub(crate) fn value_end(b: &[u8], at: usize, max_depth: usize) -> Option<usize> {
    let mut reader = Line::new(b, max_depth, Vec::new());
    reader.i = at;
    reader.value(0).ok().map(|_| reader.i)
}

/// One JSON object read strictly from `b`'s first byte, spaces after it
/// (`role`: what it is; `parent_ok`: a `parent_seq` read as any member).
fn read_whole(
    b: &[u8],
    max_depth: usize,
    keys: Vec<(usize, usize)>,
    role: Role,
    parent_ok: bool,
) -> (Step<Facts>, Vec<(usize, usize)>) {
    if b.first() != Some(&b'{') || std::str::from_utf8(b).is_err() {
        return (Err(Why::Json), keys);
    }
    let mut reader = Line::new(b, max_depth, keys);
    reader.parent_ok = parent_ok;
    let mut read = reader.object(1, role);
    if read.is_ok() {
        reader.ws();
        if reader.i != b.len() {
            read = Err(Why::Json);
        }
    }
    let mut keys = reader.keys;
    keys.clear();
    (read.map(|_| reader.facts), keys)
}

/// A receipt's bytes read as strictly as a line (one JSON object, from its
/// first byte, spaces after it): the byte range of its top-level
/// `call_id`'s value where it has one. None where it is not read so (its
/// reader then judges it).
pub(crate) fn receipt_call_id(b: &[u8], max_depth: usize) -> Option<Option<(usize, usize)>> {
    let (read, _) = read_whole(b, max_depth, Vec::new(), Role::Receipt, false);
    read.ok().map(|facts| facts.call_id)
}

/// The facts of a line the Python checks judged a valid event (a
/// `parent_seq` taken as any member), as strictly read as a line; None
/// where it is not read so.
pub(crate) fn read_event(line: &[u8], max_depth: usize) -> Option<Facts> {
    read_whole(line, max_depth, Vec::new(), Role::Top, true)
        .0
        .ok()
}

/// The envelope of one line, or why it is not regular.
pub(crate) fn read_line(
    line: &[u8],
    max_depth: usize,
    keys: Vec<(usize, usize)>,
) -> (Step<Facts>, Vec<(usize, usize)>) {
    read_whole(line, max_depth, keys, Role::Top, false)
}
