//! The calls of an `agent_run` state, held compactly: a million-event run
//! has some hundred thousand, and the app holds them beside its own states.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::Hasher;

use super::values::{Num, Status, NULL};

/// One call of `state["calls"]`: its id and the JSON text of its `tool`,
/// `args` and `reason` (empty: null) in one allocation, the rest as
/// values. Its `receipt` is `"receipts/<id>.json"` once it finished, else
/// null, as the Python rules write it.
pub(super) struct Call {
    text: Box<[u8]>,
    tool_at: u32,
    args_at: u32,
    reason_at: u32,
    pub(super) status: Status,
    pub(super) ok: Option<bool>,
    /// Changed since the changes were last written.
    pub(super) touched: bool,
    /// How many calls were proposed before it (its place in the state's order).
    pub(super) number: u32,
    pub(super) attempt: i64,
    pub(super) cost: Option<Num>,
}

impl Call {
    /// A call of these texts (`reason`: null where it is `null`); None
    /// where one is too long to place (4 GiB).
    pub(super) fn new(
        id: &[u8],
        tool: &[u8],
        args: &[u8],
        reason: &[u8],
        status: Status,
        attempt: i64,
    ) -> Option<Call> {
        let reason = if reason == NULL { &[][..] } else { reason };
        let mut text = Vec::with_capacity(id.len() + tool.len() + args.len() + reason.len());
        for part in [id, tool, args, reason] {
            text.extend_from_slice(part);
        }
        Some(Call {
            tool_at: u32::try_from(id.len()).ok()?,
            args_at: u32::try_from(id.len() + tool.len()).ok()?,
            reason_at: u32::try_from(text.len() - reason.len()).ok()?,
            text: text.into_boxed_slice(),
            status,
            ok: None,
            touched: false,
            number: 0,
            attempt,
            cost: None,
        })
    }

    pub(super) fn id(&self) -> &[u8] {
        &self.text[..self.tool_at as usize]
    }

    pub(super) fn tool(&self) -> &[u8] {
        &self.text[self.tool_at as usize..self.args_at as usize]
    }

    pub(super) fn args(&self) -> &[u8] {
        &self.text[self.args_at as usize..self.reason_at as usize]
    }

    pub(super) fn reason(&self) -> &[u8] {
        match &self.text[self.reason_at as usize..] {
            [] => NULL,
            reason => reason,
        }
    }

    /// Its `reason` set (a denial's); false where it is too long to place.
    pub(super) fn set_reason(&mut self, reason: &[u8]) -> bool {
        let mut text = self.text[..self.reason_at as usize].to_vec();
        if reason != NULL {
            text.extend_from_slice(reason);
        }
        if u32::try_from(text.len()).is_err() {
            return false;
        }
        self.text = text.into_boxed_slice();
        true
    }

    /// The call let go: its texts freed (its place is another's next).
    pub(super) fn let_go(&mut self) {
        self.text = Box::new([]);
        self.tool_at = 0;
        self.args_at = 0;
        self.reason_at = 0;
    }

    /// Its `receipt` as JSON.
    pub(super) fn write_receipt(&self, out: &mut Vec<u8>) {
        if self.status == Status::Finished {
            out.extend_from_slice(b"\"receipts/");
            out.extend_from_slice(self.id());
            out.extend_from_slice(b".json\"");
        } else {
            out.extend_from_slice(NULL);
        }
    }
}

/// Where each call is among the state's, by a hash of its id (8 bytes
/// a call, not its id again). Two ids of one hash are never told apart:
/// the second is taken for the first, and refused (where the rules are
/// not sure, the Python rules judge).
#[derive(Default)]
pub(super) struct CallIndex {
    at: HashMap<u64, u32>,
}

/// In [`CallIndex`]: the call was let go (its id is still known).
const GONE: u32 = u32::MAX;

fn id_hash(id: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    hasher.write(id);
    hasher.finish()
}

impl CallIndex {
    /// The place of the call `id` among `calls`, if it is there.
    pub(super) fn find(&self, calls: &[Call], id: &[u8]) -> Option<usize> {
        let at = *self.at.get(&id_hash(id))?;
        if at == GONE {
            return None;
        }
        let at = at as usize;
        if calls[at].id() == id {
            Some(at)
        } else {
            None
        }
    }

    /// Note `id` at `at`; false where an id of its hash is there already
    /// (the same, or one not told apart from it).
    pub(super) fn add(&mut self, id: &[u8], at: usize) -> bool {
        let at = match u32::try_from(at) {
            Ok(at) if at != GONE => at,
            _ => return false,
        };
        match self.at.entry(id_hash(id)) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(at);
                true
            }
        }
    }

    /// The call `id` was let go: no step is taken on it, and no call of its
    /// id proposed again, here (the Python rules judge those).
    pub(super) fn let_go(&mut self, id: &[u8]) {
        if let Some(at) = self.at.get_mut(&id_hash(id)) {
            *at = GONE;
        }
    }
}
