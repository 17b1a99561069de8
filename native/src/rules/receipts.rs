//! The receipts `tool_finished` lines need, read on a thread of their own
//! while the lines are applied: each one's sha256 where it is good as the
//! Python rules take it (a regular file, not through a symlink, within the
//! size limit, one JSON object read strictly, its `call_id` its name's),
//! else nothing, and the Python rules read it and say why.

use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;

use super::lines;
use super::values::plain_text;
use crate::files::read_into;
use crate::line::{read_line, receipt_call_id, Facts};
use crate::sha256::sha256_hex;

/// The kind whose lines need a receipt, as a line the core proves spells it.
const KIND: &[u8] = b"\"tool_finished\"";

/// Nesting a receipt the native rules take may have (deeper: its reader judges it).
const RECEIPT_DEPTH: usize = 512;

/// Does this line need its call's receipt (a `tool_finished` with a call id)?
pub(super) fn needs_receipt(line: &[u8], facts: &Facts) -> bool {
    match (facts.call_id, facts.kind) {
        (Some(_), Some((s, e))) => &line[s - 1..e + 1] == KIND,
        _ => false,
    }
}

/// Where receipts are read from.
pub(super) struct Reading {
    /// The depth a line may have (deeper, the line core stops there: so does this).
    pub(super) max_depth: usize,
    pub(super) dir_fd: c_int,
    pub(super) max_size: u64,
    pub(super) flags: c_int,
}

impl Reading {
    /// Send each receipt the lines need, in order, until the receiver is
    /// gone or `done` is set.
    pub(super) fn send(
        &self,
        buf: &[u8],
        start: usize,
        count: usize,
        tx: SyncSender<Option<[u8; 64]>>,
        done: &AtomicBool,
    ) {
        let mut keys = Vec::new();
        let mut data = Vec::new();
        let mut name = Vec::new();
        for (_, line) in lines(buf, start, count) {
            if done.load(Ordering::Relaxed) {
                return; // the lines stopped being applied: read no further
            }
            if !line.windows(KIND.len()).any(|w| w == KIND) {
                continue; // (a line the core proves a tool_finished has these bytes)
            }
            let (read, back) = read_line(line, self.max_depth, keys);
            keys = back;
            let facts = match read {
                Ok(f) => f,
                Err(_) => return,
            };
            if needs_receipt(line, &facts) {
                let (s, e) = facts.call_id.unwrap_or((0, 0));
                if tx
                    .send(self.good(&line[s..e], &mut data, &mut name))
                    .is_err()
                {
                    return;
                }
            }
        }
    }

    /// The sha256 of the receipt of `call_id` where it is good.
    pub(super) fn good(
        &self,
        call_id: &[u8],
        data: &mut Vec<u8>,
        name: &mut Vec<u8>,
    ) -> Option<[u8; 64]> {
        name.clear();
        name.extend_from_slice(call_id);
        name.extend_from_slice(b".json");
        data.clear();
        // Safety: dir_fd is the caller's open folder for the call.
        if !unsafe { read_into(self.dir_fd, name, self.max_size, self.flags, data) } {
            return None;
        }
        let (s, e) = receipt_call_id(data, RECEIPT_DEPTH)??;
        if plain_text(&data[s..e]) == Some(call_id) {
            Some(sha256_hex(data))
        } else {
            None
        }
    }
}
