//! The built-in `agent_run` rules (`replay_tui/reducers/agent_run.py`), run
//! over lines the line core proved regular, off the interpreter.
//!
//! They never judge: an event they are not sure the Python rules take
//! exactly so (anything those raise at, a number past 64 bits, a text with
//! an escape where they compare it, a receipt not read and found good
//! beforehand) stops them before it, the state as it was, and the Python
//! rules go on from there with the state handed over. So a run the native
//! rules prove is one the Python rules prove, to the same state: the
//! property tests compare the two at every damage they know.
//!
//! The state keeps the payload's values as their JSON text (a call's
//! `args`, a run's `task`): it is written back as JSON in the Python
//! rules' key order, and read by Python as the Python rules would have
//! made it.

use std::collections::HashMap;
use std::os::raw::c_int;
use std::slice;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;

mod calls;
mod receipts;
mod state;
mod values;

use crate::files::{open_flags, Files};
use crate::line::{
    read_event, Facts, M_ARGS, M_ATTEMPT, M_COST, M_MODEL, M_NAME, M_OK, M_PASSED, M_REASON, M_SHA,
    M_TASK, M_TO, M_TOKENS, M_TOOL,
};
use crate::Asked;
use calls::{Call, CallIndex};
use state::Taker;
use values::{bool_of, int_of, num_of, plain_text, Num, Phase, Status, NULL};

/// The budget's limits (None: none).
#[derive(Default)]
struct Limits {
    attempts: Option<i64>,
    tool_calls: Option<i64>,
    cost: Option<Num>,
}

/// The `agent_run` state, and what the rules keep beside it.
pub struct AgentRun {
    phase: Phase,
    task: Vec<u8>,
    model: Vec<u8>,
    attempt: i64,
    calls: Vec<Call>,
    index: CallIndex,
    tool_calls: i64,
    cost: Num,
    tokens: i64,
    checks: Vec<(i64, Vec<u8>, bool)>,
    /// Calls allowed or started (the Python rules' `busy` memo).
    busy: usize,
    limits: Limits,
    /// What changed since the changes were last written: the calls (by
    /// place, each once), the checks from this one on, the calls from this
    /// number on (new), the task and model.
    touched: Vec<usize>,
    checks_sent: usize,
    calls_sent: u32,
    texts_changed: bool,
    /// Calls ever (each call's number is the count before it).
    numbered: u32,
    /// What changes is noted (the app asks; `check` never does). Then a
    /// call that finished or was denied is let go once its changes are
    /// written (the taker holds it; no step is taken on it again): the
    /// state holds the calls still under way, and its place is taken by
    /// the next call proposed ([`Self::free`]).
    tracking: bool,
    free: Vec<usize>,
    /// The changes written where a state is to be kept, each after its
    /// seq (see [`rtar_prove_apply`]), until taken ([`rtar_kept`]).
    kept: Vec<u8>,
}

fn member<'a>(line: &'a [u8], facts: &Facts, m: usize) -> Option<&'a [u8]> {
    facts.members[m].map(|(s, e)| &line[s..e])
}

/// `payload.get(key)`'s text, `null` where it is absent.
fn member_or_null<'a>(line: &'a [u8], facts: &Facts, m: usize) -> &'a [u8] {
    member(line, facts, m).unwrap_or(NULL)
}

/// `payload.get("tokens", 0)` where it is a whole number >= 0.
fn tokens(line: &[u8], facts: &Facts) -> Option<i64> {
    match member(line, facts, M_TOKENS) {
        None => Some(0),
        Some(raw) => int_of(raw).filter(|t| *t >= 0),
    }
}

impl AgentRun {
    /// The state after `seq` is to be kept: what changed up to it, written
    /// to [`Self::kept`] (its seq, a newline, the changes, a newline).
    fn keep(&mut self, seq: i64) {
        let mut kept = std::mem::take(&mut self.kept);
        kept.extend_from_slice(seq.to_string().as_bytes());
        kept.push(b'\n');
        self.write_changes(&mut kept);
        kept.push(b'\n');
        self.kept = kept;
    }

    /// Call `at` changed: noted for the changes written next.
    fn touch(&mut self, at: usize) {
        let call = &mut self.calls[at];
        if self.tracking && !call.touched {
            call.touched = true;
            self.touched.push(at);
        }
    }

    fn apply(&mut self, line: &[u8], facts: &Facts, seq: i64, receipt: Option<&[u8]>) -> bool {
        let kind = match facts.kind {
            Some((s, e)) => &line[s..e],
            None => return false,
        };
        if kind == b"state_changed" {
            return plain_text(member_or_null(line, facts, M_TO)) == Some(self.phase.name());
        }
        if matches!(self.phase, Phase::Succeeded | Phase::Failed) {
            return false;
        }
        if kind == b"run_started" {
            if self.phase != Phase::New {
                return false;
            }
            self.phase = Phase::Running;
            self.task = member_or_null(line, facts, M_TASK).to_vec();
            self.model = member_or_null(line, facts, M_MODEL).to_vec();
            self.texts_changed = true;
            return true;
        }
        if self.phase == Phase::New {
            return false;
        }
        match kind {
            b"attempt_started" => {
                let attempt = match member(line, facts, M_ATTEMPT).and_then(int_of) {
                    Some(a) if Some(a) == self.attempt.checked_add(1) => a,
                    _ => return false,
                };
                if matches!(self.limits.attempts, Some(limit) if attempt > limit) {
                    return false;
                }
                self.attempt = attempt;
                true
            }
            b"model_proposed" => self.proposed(line, facts),
            b"model_finished" => match tokens(line, facts).and_then(|t| self.tokens.checked_add(t))
            {
                Some(total) => {
                    self.tokens = total;
                    true
                }
                None => false,
            },
            b"check_finished" => self.check_finished(line, facts, seq),
            b"tool_allowed" | b"tool_denied" | b"tool_started" | b"tool_finished" => {
                self.call_step(kind, line, facts, receipt)
            }
            _ => false,
        }
    }

    fn proposed(&mut self, line: &[u8], facts: &Facts) -> bool {
        if self.attempt < 1 {
            return false;
        }
        let id = match facts.call_id {
            Some((s, e)) => &line[s..e],
            None => return false,
        };
        let tool = match member(line, facts, M_TOOL) {
            Some(raw) if raw.first() == Some(&b'"') => raw,
            _ => return false,
        };
        let total = match tokens(line, facts).and_then(|t| self.tokens.checked_add(t)) {
            Some(total) => total,
            None => return false,
        };
        let mut call = match Call::new(
            id,
            tool,
            member_or_null(line, facts, M_ARGS),
            NULL,
            Status::Proposed,
            self.attempt,
        ) {
            Some(call) => call,
            None => return false,
        };
        call.number = self.numbered;
        let at = self.free.last().copied().unwrap_or(self.calls.len());
        if self.numbered == u32::MAX || !self.index.add(id, at) {
            return false;
        }
        self.numbered += 1;
        if at < self.calls.len() {
            self.free.pop();
            self.calls[at] = call;
        } else {
            self.calls.push(call);
        }
        self.touch(at);
        self.tokens = total;
        true
    }

    fn call_step(
        &mut self,
        kind: &[u8],
        line: &[u8],
        facts: &Facts,
        receipt: Option<&[u8]>,
    ) -> bool {
        let at = match facts
            .call_id
            .and_then(|(s, e)| self.index.find(&self.calls, &line[s..e]))
        {
            Some(at) => at,
            None => return false,
        };
        let need = match kind {
            b"tool_started" => Status::Allowed,
            b"tool_finished" => Status::Started,
            _ => Status::Proposed,
        };
        if self.calls[at].status != need {
            return false;
        }
        match kind {
            b"tool_allowed" => {
                let count = match self.tool_calls.checked_add(1) {
                    Some(c) => c,
                    None => return false,
                };
                if matches!(self.limits.tool_calls, Some(limit) if count > limit) {
                    return false;
                }
                self.calls[at].status = Status::Allowed;
                self.tool_calls = count;
                self.busy += 1;
            }
            b"tool_denied" => {
                let call = &mut self.calls[at];
                if !call.set_reason(member_or_null(line, facts, M_REASON)) {
                    return false;
                }
                call.status = Status::Denied;
            }
            b"tool_started" => self.calls[at].status = Status::Started,
            _ => return self.finished(at, line, facts, receipt),
        }
        self.touch(at);
        true
    }

    /// `tool_finished`: `receipt` is the sha256 (hex) of the call's receipt,
    /// read and found good beforehand (a JSON object whose `call_id` is its
    /// name's), or None.
    fn finished(&mut self, at: usize, line: &[u8], facts: &Facts, receipt: Option<&[u8]>) -> bool {
        let ok = match member(line, facts, M_OK).and_then(bool_of) {
            Some(ok) => ok,
            None => return false,
        };
        let sha = match receipt {
            Some(sha) => sha,
            None => return false,
        };
        let pinned = member_or_null(line, facts, M_SHA);
        if pinned != NULL {
            match plain_text(pinned) {
                Some(text) if text.is_ascii() && text.eq_ignore_ascii_case(sha) => {}
                _ => return false,
            }
        }
        let cost = match member(line, facts, M_COST) {
            None => Num::Int(0),
            Some(raw) if raw == NULL => Num::Int(0),
            Some(raw) => match num_of(raw) {
                Some(c) if !c.negative() => c,
                _ => return false,
            },
        };
        let total = match self.cost.add(cost) {
            Some(t) => t,
            None => return false,
        };
        if matches!(self.limits.cost, Some(limit) if total.above(limit)) {
            return false;
        }
        let call = &mut self.calls[at];
        call.status = Status::Finished;
        call.ok = Some(ok);
        call.cost = Some(cost);
        self.cost = total;
        self.busy -= 1;
        self.touch(at);
        true
    }

    fn check_finished(&mut self, line: &[u8], facts: &Facts, seq: i64) -> bool {
        let passed = match member(line, facts, M_PASSED).and_then(bool_of) {
            Some(p) => p,
            None => return false,
        };
        if self.busy > 0 {
            return false;
        }
        let name = member_or_null(line, facts, M_NAME).to_vec();
        self.checks.push((seq, name, passed));
        self.phase = if passed {
            Phase::Succeeded
        } else if self
            .limits
            .attempts
            .map_or(true, |limit| self.attempt < limit)
        {
            Phase::Retrying
        } else {
            Phase::Failed
        };
        true
    }
}

fn limit(kind: i32, whole: i64, double: f64) -> Option<Num> {
    match kind {
        1 => Some(Num::Int(whole)),
        2 => Some(Num::Float(double)),
        _ => None,
    }
}

/// The rules from `state` (JSON as the Python rules' state is written:
/// `orjson.dumps`), with the budget's limits (`*_kind`: 0 none, 1 an int,
/// 2 a float); null if the state is not of the shape those rules make.
/// With `track` (not 0), what changes is noted for [`rtar_changes`].
///
/// # Safety
/// `state` must be valid for `state_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn rtar_new(
    state: *const u8,
    state_len: usize,
    attempts_kind: i32,
    attempts: i64,
    tool_calls_kind: i32,
    tool_calls: i64,
    cost_kind: i32,
    cost_whole: i64,
    cost: f64,
    track: i32,
) -> *mut AgentRun {
    let limits = Limits {
        attempts: match limit(attempts_kind, attempts, 0.0) {
            Some(Num::Int(a)) => Some(a),
            _ => None,
        },
        tool_calls: match limit(tool_calls_kind, tool_calls, 0.0) {
            Some(Num::Int(t)) => Some(t),
            _ => None,
        },
        cost: limit(cost_kind, cost_whole, cost),
    };
    let b = slice::from_raw_parts(state, state_len);
    match (Taker { b, i: 0 }).state(limits) {
        Some(mut rules) => {
            rules.tracking = track != 0;
            Box::into_raw(Box::new(rules))
        }
        None => std::ptr::null_mut(),
    }
}

/// Free what [`rtar_new`] returned.
///
/// # Safety
/// `rules` must come from [`rtar_new`], freed once.
#[no_mangle]
pub unsafe extern "C" fn rtar_free(rules: *mut AgentRun) {
    if !rules.is_null() {
        drop(Box::from_raw(rules));
    }
}

/// The state as JSON (free it with `rtlc_free_files`; `rtlc_files_data`
/// and `rtlc_files_len` give its bytes): `part` 0, all of it, in the Python
/// rules' key order; 1, all but the calls (`"calls":{}`); 2, the calls alone,
/// one JSON object; 3, the calls in the order of their ids, `group` to a
/// line, each line one JSON object (for a canonical digest).
///
/// # Safety
/// `rules` must come from [`rtar_new`].
#[no_mangle]
pub unsafe extern "C" fn rtar_state(rules: *const AgentRun, part: i32, group: usize) -> *mut Files {
    let rules = &*rules;
    let mut data = Vec::new();
    match part {
        0 => rules.write(&mut data, true),
        1 => rules.write(&mut data, false),
        2 => rules.write_calls(&mut data, 0..rules.calls.len(), 0),
        _ => rules.write_sorted_calls(&mut data, group),
    }
    Box::into_raw(Box::new(Files { data }))
}

/// What changed in the state since this was last called (or the state
/// was taken), then forgotten (see `AgentRun::write_changes`); freed and
/// read as [`rtar_state`]'s.
///
/// # Safety
/// `rules` must come from [`rtar_new`].
#[no_mangle]
pub unsafe extern "C" fn rtar_changes(rules: *mut AgentRun) -> *mut Files {
    let mut data = Vec::new();
    (*rules).write_changes(&mut data);
    Box::into_raw(Box::new(Files { data }))
}

/// What [`rtar_prove_apply`] wrote where a state is to be kept, since
/// this was last called (then forgotten): for each, its seq, a newline, the
/// changes as [`rtar_changes`] writes them, a newline. Freed and read as
/// [`rtar_state`]'s.
///
/// # Safety
/// `rules` must come from [`rtar_new`].
#[no_mangle]
pub unsafe extern "C" fn rtar_kept(rules: *mut AgentRun) -> *mut Files {
    let data = std::mem::take(&mut (*rules).kept);
    Box::into_raw(Box::new(Files { data }))
}

/// `count` lines of `buf` from byte `start`, each with the byte it starts at.
fn lines(buf: &[u8], start: usize, count: usize) -> impl Iterator<Item = (usize, &[u8])> {
    let mut at = start;
    (0..count).map_while(move |_| {
        let end = at + buf[at..].iter().position(|c| *c == b'\n')?;
        let line = (at, &buf[at..end]);
        at = end + 1;
        Some(line)
    })
}

/// Prove lines as `rtlc_prove` does (its arguments, its outputs) and apply each with the rules: a line they leave to the Python
/// rules ends the run there (why: `Rules`), the state as before it. The
/// receipts the `tool_finished` lines need are read from the folder open as
/// `receipts_fd` (-1: none is read here, the Python rules read them) on
/// another thread, as the lines are applied (see [`receipts`]).
///
/// Writes to `ids` each call id the lines applied name, in the order they
/// first name it, each followed by `\n` (room for `len - start` bytes); to
/// `id_pins`, for each of them that a line applied pins a receipt with (a
/// `receipt_sha256` beside it), its place in `ids` and the index (from the
/// first line) of the last such line (two i64 each, room for
/// `2 * max_lines`); to `noted`: the bytes of `ids` and how many pins.
/// Where `line_calls` is not null, each line's call as the rules'
/// `call_of` says (for the app's call index): -1 none; its call id's place
/// in `ids`, n >= 0; or -2 - n where the line ends that call in failure (a
/// `tool_finished` not ok). Where `keep_every` is over 0, the state after
/// seq `keep_at` is to be kept, and after each `keep_every` lines since
/// the last: what changed up to each is written for [`rtar_kept`] (the
/// rules must track changes). Returns the lines proven and applied.
///
/// # Safety
/// As `rtlc_prove`'s; `rules` must come from [`rtar_new`], `ids` be valid
/// for `len - start` bytes, `id_pins` for `2 * max_lines` i64, `noted` for
/// two, `line_calls` (unless null) for `max_lines` i32.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rtar_prove_apply(
    rules: *mut AgentRun,
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
    receipts_fd: c_int,
    max_size: u64,
    ids: *mut u8,
    id_pins: *mut i64,
    noted: *mut i64,
    line_calls: *mut i32,
    keep_at: i64,
    keep_every: i64,
) -> i64 {
    let rules = &mut *rules;
    let ask = Asked::new(
        buf, len, start, first_seq, run_id, run_id_len, kinds, kinds_len, max_depth, max_lines,
        max_len,
    );
    let buf = ask.buf();
    let ids = slice::from_raw_parts_mut(ids, len - start);
    let id_pins = slice::from_raw_parts_mut(id_pins, 2 * max_lines);
    let noted = slice::from_raw_parts_mut(noted, 2);
    let mut line_calls: Option<&mut [i32]> = if line_calls.is_null() {
        None
    } else {
        Some(slice::from_raw_parts_mut(line_calls, max_lines))
    };
    // each call id the lines applied name: where it is first, the last line that pins its receipt
    let mut first: HashMap<&[u8], usize> = HashMap::new();
    let mut named: Vec<(usize, usize, i64)> = Vec::new();
    let flags = if receipts_fd >= 0 { open_flags() } else { None };
    let done = AtomicBool::new(false);
    let done_ref = &done;
    let mut next_keep = keep_at;
    let proven = std::thread::scope(|scope| {
        // each tool_finished line's receipt: its sha256 where it is good,
        // read on a thread started at the first line that needs one
        let (tx, rx) = sync_channel::<Option<[u8; 64]>>(1024);
        let mut unstarted = Some(tx);
        let proven = ask.prove(backs, pins, out, seconds, |at, line, facts, k| {
            let receipt = if receipts::needs_receipt(line, facts) {
                if let Some(tx) = unstarted.take() {
                    if let Some(flags) = flags {
                        let reading = receipts::Reading {
                            max_depth,
                            dir_fd: receipts_fd,
                            max_size,
                            flags,
                        };
                        let count = max_lines - k;
                        scope.spawn(move || reading.send(buf, at, count, tx, done_ref));
                    } // (else none is read here: each is the Python rules')
                }
                rx.recv().ok().flatten()
            } else {
                None
            };
            let sha = receipt.as_ref().map(|s| &s[..]);
            let seq = first_seq + k as i64;
            if !rules.apply(line, facts, seq, sha) {
                return false;
            }
            if keep_every > 0 && seq >= next_keep {
                rules.keep(seq);
                next_keep = seq + keep_every;
            }
            let mut call = -1;
            if let Some((s, e)) = facts.call_id {
                let slot = *first.entry(&line[s..e]).or_insert_with(|| {
                    named.push((at + s, at + e, -1));
                    named.len() - 1
                });
                if facts.pinned {
                    named[slot].2 = k as i64;
                }
                call = slot as i32;
            }
            if let Some(room) = line_calls.as_deref_mut() {
                room[k] = call_of(line, facts, call);
            }
            true
        });
        done.store(true, Ordering::Relaxed); // (the reader stops at its next line)
        drop(rx); // (or its next receipt)
        proven
    });
    let mut at = 0;
    let mut pinned = 0;
    for (n, (s, e, pin)) in named.iter().enumerate() {
        ids[at..at + e - s].copy_from_slice(&buf[*s..*e]);
        ids[at + e - s] = b'\n';
        at += e - s + 1;
        if *pin >= 0 {
            id_pins[2 * pinned] = n as i64;
            id_pins[2 * pinned + 1] = *pin;
            pinned += 1;
        }
    }
    noted[0] = at as i64;
    noted[1] = pinned as i64;
    proven
}

/// A line's call as the rules' `call_of` says, `slot` its call id's place
/// (see [`rtar_prove_apply`]'s `line_calls`): a call's lines are those of
/// its kinds; a `tool_finished` not ok ends it in failure.
fn call_of(line: &[u8], facts: &Facts, slot: i32) -> i32 {
    let kind = match facts.kind {
        Some((s, e)) => &line[s..e],
        None => return -1,
    };
    match kind {
        _ if slot < 0 => -1,
        b"tool_finished" if member(line, facts, M_OK).and_then(bool_of) == Some(false) => -2 - slot,
        b"model_proposed" | b"tool_allowed" | b"tool_denied" | b"tool_started"
        | b"tool_finished" => slot,
        _ => -1,
    }
}

/// Apply one line the Python checks judged a valid event (seq `seq`),
/// which the line core does not prove (a `parent_seq`, say): 1 where the
/// rules took it, 0 where it is the Python rules' (the state as before).
/// Its receipt, if it needs one, is read from the folder open as
/// `receipts_fd` (-1: none is read here).
///
/// # Safety
/// `rules` must come from [`rtar_new`]; `line` valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn rtar_apply_line(
    rules: *mut AgentRun,
    line: *const u8,
    len: usize,
    seq: i64,
    max_depth: usize,
    receipts_fd: c_int,
    max_size: u64,
) -> i32 {
    let rules = &mut *rules;
    let line = slice::from_raw_parts(line, len);
    let facts = match read_event(line, max_depth) {
        Some(f) => f,
        None => return 0,
    };
    let mut receipt = None;
    if receipts::needs_receipt(line, &facts) {
        if let (Some(flags), Some((s, e))) =
            (open_flags().filter(|_| receipts_fd >= 0), facts.call_id)
        {
            let reading = receipts::Reading {
                max_depth,
                dir_fd: receipts_fd,
                max_size,
                flags,
            };
            receipt = reading.good(&line[s..e], &mut Vec::new(), &mut Vec::new());
        }
    }
    rules.apply(line, &facts, seq, receipt.as_ref().map(|s| &s[..])) as i32
}
