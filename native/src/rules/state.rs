//! The `agent_run` state as JSON: written in the Python rules' key order
//! (Python reads it back as their state), and taken from the JSON of their
//! state (`orjson.dumps`) where it has the shape those rules make.

use super::calls::{Call, CallIndex};
use super::values::{bool_of, int_of, num_of, plain_text, Num, Phase, Status, NULL};
use super::{AgentRun, Limits};
use crate::line::value_end;

impl AgentRun {
    /// The state as JSON, in the Python rules' key order (`calls`: with
    /// its calls, else `{}`).
    pub(super) fn write(&self, out: &mut Vec<u8>, calls: bool) {
        out.extend_from_slice(b"{\"phase\":\"");
        out.extend_from_slice(self.phase.name());
        out.extend_from_slice(b"\",\"task\":");
        out.extend_from_slice(&self.task);
        out.extend_from_slice(b",\"model\":");
        out.extend_from_slice(&self.model);
        out.extend_from_slice(b",\"attempt\":");
        Num::Int(self.attempt).write(out);
        out.extend_from_slice(b",\"calls\":");
        if calls {
            self.write_calls(out, 0..self.calls.len(), 0);
        } else {
            out.extend_from_slice(b"{}");
        }
        self.write_rest(out, 0);
    }

    /// What changed since this was last called (or the state was taken),
    /// then forgotten: a JSON object of the state's members but its calls,
    /// the task and the model only where a run started since, the checks
    /// only those added since; a newline; the calls changed since, one JSON
    /// object in the order of the state's calls, each call there before
    /// only with the members its steps change (see [`Self::write_calls`]).
    pub(super) fn write_changes(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"phase\":\"");
        out.extend_from_slice(self.phase.name());
        out.push(b'"');
        if self.texts_changed {
            out.extend_from_slice(b",\"task\":");
            out.extend_from_slice(&self.task);
            out.extend_from_slice(b",\"model\":");
            out.extend_from_slice(&self.model);
        }
        out.extend_from_slice(b",\"attempt\":");
        Num::Int(self.attempt).write(out);
        self.write_rest(out, self.checks_sent);
        out.push(b'\n');
        let calls = &self.calls;
        self.touched.sort_unstable_by_key(|at| calls[*at].number);
        self.write_calls(out, self.touched.iter().copied(), self.calls_sent);
        for at in self.touched.drain(..) {
            let call = &mut self.calls[at];
            call.touched = false;
            if matches!(call.status, Status::Finished | Status::Denied) {
                self.index.let_go(call.id());
                call.let_go();
                self.free.push(at);
            }
        }
        self.checks_sent = self.checks.len();
        if self.tracking {
            self.checks.clear(); // (the taker holds them: only new ones are written)
            self.checks_sent = 0;
        }
        self.calls_sent = self.numbered;
        self.texts_changed = false;
    }

    /// The calls of `order` (places) as one JSON object; those numbered
    /// before `whole_from` only with the members a call's steps change (`status`,
    /// `ok`, `cost`, `receipt`, `reason`: its `tool`, `args` and `attempt`
    /// are those it was proposed with).
    pub(super) fn write_calls(
        &self,
        out: &mut Vec<u8>,
        order: impl Iterator<Item = usize>,
        whole_from: u32,
    ) {
        out.push(b'{');
        for (n, at) in order.enumerate() {
            let call = &self.calls[at];
            if n > 0 {
                out.push(b',');
            }
            out.push(b'"');
            out.extend_from_slice(call.id());
            if call.number >= whole_from {
                out.extend_from_slice(b"\":{\"tool\":");
                out.extend_from_slice(call.tool());
                out.extend_from_slice(b",\"args\":");
                out.extend_from_slice(call.args());
                out.extend_from_slice(b",\"status\":\"");
                out.extend_from_slice(call.status.name());
                out.extend_from_slice(b"\",\"attempt\":");
                Num::Int(call.attempt).write(out);
            } else {
                out.extend_from_slice(b"\":{\"status\":\"");
                out.extend_from_slice(call.status.name());
                out.push(b'"');
            }
            out.extend_from_slice(b",\"ok\":");
            out.extend_from_slice(match call.ok {
                None => NULL,
                Some(true) => b"true",
                Some(false) => b"false",
            });
            out.extend_from_slice(b",\"cost\":");
            match call.cost {
                None => out.extend_from_slice(NULL),
                Some(c) => c.write(out),
            }
            out.extend_from_slice(b",\"receipt\":");
            call.write_receipt(out);
            out.extend_from_slice(b",\"reason\":");
            out.extend_from_slice(call.reason());
            out.push(b'}');
        }
        out.push(b'}');
    }

    /// The calls in the order of their ids' bytes (the canonical JSON's
    /// order: a call id is ASCII), `group` to a line, each line one JSON object.
    pub(super) fn write_sorted_calls(&self, out: &mut Vec<u8>, group: usize) {
        let mut order: Vec<usize> = (0..self.calls.len()).collect();
        order.sort_unstable_by(|a, b| self.calls[*a].id().cmp(self.calls[*b].id()));
        if order.is_empty() {
            out.extend_from_slice(b"{}");
        }
        for (n, part) in order.chunks(group.max(1)).enumerate() {
            if n > 0 {
                out.push(b'\n');
            }
            self.write_calls(out, part.iter().copied(), 0);
        }
    }

    /// The members after the calls, the checks from `first` on.
    fn write_rest(&self, out: &mut Vec<u8>, first: usize) {
        out.extend_from_slice(b",\"spent\":{\"tool_calls\":");
        Num::Int(self.tool_calls).write(out);
        out.extend_from_slice(b",\"cost\":");
        self.cost.write(out);
        out.extend_from_slice(b",\"tokens\":");
        Num::Int(self.tokens).write(out);
        out.extend_from_slice(b"},\"checks\":[");
        for (n, (seq, name, passed)) in self.checks[first..].iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"seq\":");
            Num::Int(*seq).write(out);
            out.extend_from_slice(b",\"name\":");
            out.extend_from_slice(name);
            out.extend_from_slice(if *passed {
                b",\"passed\":true}"
            } else {
                b",\"passed\":false}"
            });
        }
        out.extend_from_slice(b"]}");
    }
}

/// Reads a state written as [`AgentRun::write`] writes it (and as
/// `orjson.dumps` writes the Python rules' state): those keys in that
/// order, no space; None for any other shape.
pub(super) struct Taker<'a> {
    pub(super) b: &'a [u8],
    pub(super) i: usize,
}

impl<'a> Taker<'a> {
    fn word(&mut self, w: &[u8]) -> Option<()> {
        if self.b[self.i..].starts_with(w) {
            self.i += w.len();
            Some(())
        } else {
            None
        }
    }
    fn value(&mut self) -> Option<&'a [u8]> {
        let end = value_end(self.b, self.i, 1024)?;
        let raw = &self.b[self.i..end];
        self.i = end;
        Some(raw)
    }
    fn text(&mut self) -> Option<&'a [u8]> {
        self.value().and_then(plain_text)
    }
    fn int(&mut self) -> Option<i64> {
        self.value().and_then(int_of)
    }
    fn num(&mut self) -> Option<Num> {
        self.value().and_then(num_of)
    }
    fn maybe<T>(&mut self, read: impl Fn(&[u8]) -> Option<T>) -> Option<Option<T>> {
        let raw = self.value()?;
        if raw == NULL {
            Some(None)
        } else {
            read(raw).map(Some)
        }
    }
    fn more(&mut self, close: u8) -> Option<bool> {
        match self.b.get(self.i)? {
            b',' => {
                self.i += 1;
                Some(true)
            }
            c if *c == close => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    fn call(&mut self, id: &[u8]) -> Option<Call> {
        self.word(b"{\"tool\":")?;
        let tool = self.value()?;
        self.word(b",\"args\":")?;
        let args = self.value()?;
        self.word(b",\"status\":")?;
        let status = Status::of(self.text()?)?;
        self.word(b",\"attempt\":")?;
        let attempt = self.int()?;
        self.word(b",\"ok\":")?;
        let ok = self.maybe(bool_of)?;
        self.word(b",\"cost\":")?;
        let cost = self.maybe(num_of)?;
        self.word(b",\"receipt\":")?;
        let receipt = self.value()?;
        self.word(b",\"reason\":")?;
        let reason = self.value()?;
        self.word(b"}")?;
        let mut call = Call::new(id, tool, args, reason, status, attempt)?;
        call.ok = ok;
        call.cost = cost;
        // the receipt is the one the rules name once the call finished
        let mut named = Vec::new();
        call.write_receipt(&mut named);
        if receipt != &named[..] {
            return None;
        }
        Some(call)
    }

    pub(super) fn state(&mut self, limits: Limits) -> Option<AgentRun> {
        self.word(b"{\"phase\":")?;
        let phase = Phase::of(self.text()?)?;
        self.word(b",\"task\":")?;
        let task = self.value()?.to_vec();
        self.word(b",\"model\":")?;
        let model = self.value()?.to_vec();
        self.word(b",\"attempt\":")?;
        let attempt = self.int()?;
        self.word(b",\"calls\":{")?;
        let mut calls: Vec<Call> = Vec::new();
        let mut index = CallIndex::default();
        let mut busy = 0;
        if self.more(b'}') != Some(false) {
            loop {
                let id = self.text()?;
                self.word(b":")?;
                let mut call = self.call(id)?;
                call.number = u32::try_from(calls.len()).ok()?;
                if matches!(call.status, Status::Allowed | Status::Started) {
                    busy += 1;
                }
                if !index.add(id, calls.len()) {
                    return None;
                }
                calls.push(call);
                if !self.more(b'}')? {
                    break;
                }
            }
        }
        self.word(b",\"spent\":{\"tool_calls\":")?;
        let tool_calls = self.int()?;
        self.word(b",\"cost\":")?;
        let cost = self.num()?;
        self.word(b",\"tokens\":")?;
        let tokens = self.int()?;
        self.word(b"},\"checks\":[")?;
        let mut checks = Vec::new();
        if self.more(b']') != Some(false) {
            loop {
                self.word(b"{\"seq\":")?;
                let seq = self.int()?;
                self.word(b",\"name\":")?;
                let name = self.value()?.to_vec();
                self.word(b",\"passed\":")?;
                let passed = bool_of(self.value()?)?;
                self.word(b"}")?;
                checks.push((seq, name, passed));
                if !self.more(b']')? {
                    break;
                }
            }
        }
        self.word(b"}")?;
        if self.i != self.b.len() {
            return None;
        }
        Some(AgentRun {
            checks_sent: checks.len(),
            calls_sent: u32::try_from(calls.len()).ok()?,
            numbered: u32::try_from(calls.len()).ok()?,
            free: Vec::new(),
            touched: Vec::new(),
            texts_changed: false,
            tracking: false,
            kept: Vec::new(),
            phase,
            task,
            model,
            attempt,
            calls,
            index,
            tool_calls,
            cost,
            tokens,
            checks,
            busy,
            limits,
        })
    }
}
