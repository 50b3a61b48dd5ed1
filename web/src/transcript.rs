//! The transcript's state: what the controller's `View` deltas say, kept as
//! fine-grained signals so a delta touches only the thing it names.
//!
//! Command output is the hot path (a benchmark streams megabytes through it),
//! so it bypasses the reactive graph: `Output` deltas append to a plain
//! per-command buffer, and at most once per animation frame the buffered text
//! is appended to that command's `<pre>` as DOM text. The `<pre>` holds its
//! text in block segments cut at line ends, so an append lays out one
//! segment, not the whole output, and trimming the front (the display keeps
//! the last [`SHOWN_BYTES`] per command) removes whole segments.
//!
//! The UI never decides an outcome: every outcome, exit code and note shown
//! here is the controller's, copied from the delta.

use crate::worded::ViewDelta;
use leptos::html::{Div, Pre};
use leptos::prelude::*;
use lifeline_core::view::OutputRead;
use lifeline_core::{
    CommandId, EventSeq, Outcome, ProviderFailureView, ProviderRequestId, ProviderRequestStatus,
    SessionId, TurnId, TurnStatus,
};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::{HtmlElement, HtmlPreElement, Text};

/// Output shown per command; older output stays in the journal.
pub const SHOWN_BYTES: usize = 256 * 1024;
/// A display segment closes at the first line end after this many bytes.
const SEGMENT_BYTES: usize = 4 * 1024;
/// Output text added to the page per animation frame, over all commands:
/// laying out new text is the frame's main cost, so a burst of output is
/// shown over several frames instead of in one long task.
const FRAME_BYTES: usize = 8 * 1024;

/// One turn as the transcript shows it.
#[derive(Clone, Copy)]
pub struct TurnView {
    pub id: TurnId,
    /// Which reset this view belongs to: keyed lists must not reuse a block
    /// rendered from an earlier reset's signals.
    pub epoch: u32,
    pub prompt: RwSignal<String>,
    pub status: RwSignal<Option<TurnStatus>>,
    pub reply: RwSignal<Option<String>>,
    /// Why the core ended the turn, worded in the reader's language in
    /// place of `reply` (older records have none).
    pub ending: RwSignal<Option<String>>,
    /// Input and output tokens of its recorded replies.
    pub tokens: RwSignal<(u64, u64)>,
    /// Provider requests and command blocks, in the order they arrived.
    pub items: RwSignal<Vec<TurnItem>>,
}

/// Something shown inside a turn, between its prompt and its reply.
#[derive(Clone, Copy)]
pub enum TurnItem {
    Request(RequestView),
    Command(CommandView),
}

impl TurnItem {
    /// A key for keyed lists: kind, identity, reset epoch.
    pub fn key(&self) -> (u8, u128, u32) {
        match self {
            TurnItem::Request(r) => (0, r.id.as_u128(), r.epoch),
            TurnItem::Command(c) => (1, c.id.as_u128(), c.epoch),
        }
    }
}

/// One provider request of a model turn, as the journal recorded it.
#[derive(Clone, Copy)]
pub struct RequestView {
    pub id: ProviderRequestId,
    pub epoch: u32,
    pub step: RwSignal<u32>,
    pub status: RwSignal<ProviderRequestStatus>,
    pub text: RwSignal<Option<String>>,
    pub tool_calls: RwSignal<Vec<String>>,
    pub failure: RwSignal<Option<ProviderFailureView>>,
}

/// One command block.
#[derive(Clone, Copy)]
pub struct CommandView {
    pub id: CommandId,
    pub epoch: u32,
    pub line: RwSignal<String>,
    pub outcome: RwSignal<Outcome>,
    pub exit_code: RwSignal<Option<i32>>,
    pub evidence: RwSignal<Option<String>>,
    /// The command line this one re-issues, when the user re-issued it.
    pub reissue_of: RwSignal<Option<String>>,
    /// A later command re-issued this one.
    pub reissued: RwSignal<bool>,
    /// Earlier output is in the journal but not held for display (a `Gap`).
    pub gap: RwSignal<bool>,
    /// Bytes the controller kept only as artifacts or dropped by the budget.
    pub not_shown: RwSignal<u64>,
    /// The display dropped the front of the output to stay within its cap.
    pub trimmed: RwSignal<bool>,
    /// A settled command's output still being read from the journal, or
    /// unreadable.
    pub read: RwSignal<OutputRead>,
    pub output: NodeRef<Pre>,
}

/// The signals components read.
#[derive(Clone, Copy)]
pub struct TranscriptSignals {
    pub session: RwSignal<Option<SessionId>>,
    pub title: RwSignal<Option<String>>,
    pub turns: RwSignal<Vec<TurnView>>,
    /// Commands the controller did not place in a turn.
    pub loose: RwSignal<Vec<CommandView>>,
    /// A model reply streaming in for a turn: a preview, not durable.
    pub streaming: RwSignal<Option<(TurnId, String)>>,
    /// Input and output tokens of the session's recorded replies.
    pub tokens: RwSignal<(u64, u64)>,
    pub log: NodeRef<Div>,
}

impl TranscriptSignals {
    pub fn new() -> Self {
        Self {
            session: RwSignal::new(None),
            title: RwSignal::new(None),
            turns: RwSignal::new(Vec::new()),
            loose: RwSignal::new(Vec::new()),
            streaming: RwSignal::new(None),
            tokens: RwSignal::new((0, 0)),
            log: NodeRef::new(),
        }
    }
}

struct Segment {
    element: HtmlElement,
    text: Text,
    bytes: usize,
    /// Full and ending at a line end: the next text starts a new segment.
    closed: bool,
}

#[derive(Default)]
struct OutputDom {
    segments: VecDeque<Segment>,
    shown: usize,
}

struct CommandEntry {
    view: CommandView,
    placed: bool,
    last_seq: EventSeq,
    pending: String,
    /// `pending` lost its front to the cap before it could be shown.
    pending_trimmed: bool,
    /// `pending` replaces what is shown (a `Settled` delta).
    replace: bool,
    dom: OutputDom,
}

struct Model {
    signals: TranscriptSignals,
    owner: Owner,
    epoch: u32,
    turns: HashMap<TurnId, TurnView>,
    requests: HashMap<ProviderRequestId, RequestView>,
    commands: HashMap<CommandId, CommandEntry>,
    dirty: Vec<CommandId>,
    frame_requested: bool,
    stick_to_bottom: bool,
    frame: Option<Closure<dyn FnMut()>>,
}

thread_local! {
    static MODEL: RefCell<Option<Model>> = const { RefCell::new(None) };
}

/// Installs the model; signals created later belong to `owner`.
pub fn init(signals: TranscriptSignals, owner: Owner) {
    MODEL.with(|m| {
        *m.borrow_mut() = Some(Model {
            signals,
            owner,
            epoch: 0,
            turns: HashMap::new(),
            requests: HashMap::new(),
            commands: HashMap::new(),
            dirty: Vec::new(),
            frame_requested: false,
            stick_to_bottom: true,
            frame: None,
        })
    });
}

/// Applies one `View` message.
pub fn apply(reset: bool, deltas: Vec<ViewDelta>) {
    MODEL.with(|m| {
        let mut guard = m.borrow_mut();
        let Some(model) = guard.as_mut() else { return };
        if reset {
            model.reset();
        }
        for delta in deltas {
            model.apply(delta);
        }
        model.request_frame();
    });
}

/// A model reply streaming in for `turn`. It replaces any other turn's
/// preview and is ignored once the turn has ended.
pub fn streaming(turn: TurnId, text: String) {
    MODEL.with(|m| {
        let mut guard = m.borrow_mut();
        let Some(model) = guard.as_mut() else { return };
        let ended = model
            .turns
            .get(&turn)
            .is_some_and(|t| t.status.with_untracked(Option::is_some));
        let value = (!ended).then_some((turn, text));
        set_if_changed(model.signals.streaming, value);
        model.request_frame();
    });
}

/// The transcript was scrolled (by the user or by us).
pub fn log_scrolled(at_bottom: bool) {
    MODEL.with(|m| {
        if let Some(model) = m.borrow_mut().as_mut() {
            model.stick_to_bottom = at_bottom;
        }
    });
}

/// Something other than a delta grew the transcript (a refused prompt note,
/// say): keep the bottom in view if it was.
pub fn content_changed() {
    MODEL.with(|m| {
        if let Some(model) = m.borrow_mut().as_mut() {
            model.request_frame();
        }
    });
}

pub fn is_at_bottom(element: &web_sys::Element) -> bool {
    element.scroll_height() - element.scroll_top() - element.client_height() <= 8
}

impl Model {
    fn reset(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.turns.clear();
        self.requests.clear();
        self.commands.clear();
        self.dirty.clear();
        self.signals.session.set(None);
        self.signals.title.set(None);
        self.signals.turns.set(Vec::new());
        self.signals.loose.set(Vec::new());
        self.signals.streaming.set(None);
        self.signals.tokens.set((0, 0));
        self.stick_to_bottom = true;
    }

    fn turn(&mut self, id: TurnId) -> TurnView {
        if let Some(t) = self.turns.get(&id) {
            return *t;
        }
        let epoch = self.epoch;
        let view = self.owner.with(|| TurnView {
            id,
            epoch,
            prompt: RwSignal::new(String::new()),
            status: RwSignal::new(None),
            reply: RwSignal::new(None),
            ending: RwSignal::new(None),
            tokens: RwSignal::new((0, 0)),
            items: RwSignal::new(Vec::new()),
        });
        self.turns.insert(id, view);
        self.signals.turns.update(|turns| turns.push(view));
        view
    }

    fn command(&mut self, id: CommandId) -> &mut CommandEntry {
        let (owner, epoch) = (&self.owner, self.epoch);
        self.commands.entry(id).or_insert_with(|| CommandEntry {
            view: owner.with(|| CommandView {
                id,
                epoch,
                line: RwSignal::new(String::new()),
                outcome: RwSignal::new(Outcome::Admitted),
                exit_code: RwSignal::new(None),
                evidence: RwSignal::new(None),
                reissue_of: RwSignal::new(None),
                reissued: RwSignal::new(false),
                gap: RwSignal::new(false),
                not_shown: RwSignal::new(0),
                trimmed: RwSignal::new(false),
                read: RwSignal::new(OutputRead::Shown),
                output: NodeRef::new(),
            }),
            placed: false,
            last_seq: EventSeq::ZERO,
            pending: String::new(),
            pending_trimmed: false,
            replace: false,
            dom: OutputDom::default(),
        })
    }

    fn apply(&mut self, delta: ViewDelta) {
        match delta {
            ViewDelta::Session { session, title } => {
                set_if_changed(self.signals.session, Some(session));
                set_if_changed(self.signals.title, Some(title));
            }
            ViewDelta::Turn {
                turn,
                prompt,
                status,
                reply,
                ending,
                input_tokens,
                output_tokens,
                ..
            } => {
                let view = self.turn(turn);
                if status.is_some() {
                    self.end_streaming(turn);
                }
                set_if_changed(view.prompt, prompt);
                set_if_changed(view.status, status);
                set_if_changed(view.reply, reply);
                set_if_changed(view.ending, ending);
                set_if_changed(view.tokens, (input_tokens, output_tokens));
                let total = self.turns.values().fold((0u64, 0u64), |(i, o), t| {
                    let (ti, to) = t.tokens.get_untracked();
                    (i.saturating_add(ti), o.saturating_add(to))
                });
                set_if_changed(self.signals.tokens, total);
            }
            ViewDelta::ProviderRequest {
                turn,
                request,
                step,
                status,
                text,
                tool_calls,
                failure,
                ..
            } => {
                let turn_view = self.turn(turn);
                if status != ProviderRequestStatus::Waiting {
                    // Its recorded reply (or failure) replaces the preview.
                    self.end_streaming(turn);
                }
                let view = match self.requests.get(&request) {
                    Some(view) => *view,
                    None => {
                        let epoch = self.epoch;
                        let view = self.owner.with(|| RequestView {
                            id: request,
                            epoch,
                            step: RwSignal::new(step),
                            status: RwSignal::new(status),
                            text: RwSignal::new(None),
                            tool_calls: RwSignal::new(Vec::new()),
                            failure: RwSignal::new(None),
                        });
                        self.requests.insert(request, view);
                        turn_view
                            .items
                            .update(|items| items.push(TurnItem::Request(view)));
                        view
                    }
                };
                set_if_changed(view.step, step);
                set_if_changed(view.status, status);
                set_if_changed(view.text, text);
                set_if_changed(view.tool_calls, tool_calls);
                set_if_changed(view.failure, failure);
            }
            ViewDelta::Command {
                turn,
                command,
                line,
                outcome,
                exit_code,
                evidence,
                reissue_of,
                reissued_as,
                ..
            } => {
                let turn_view = turn.map(|t| self.turn(t));
                // The controller sends the original before its re-issue.
                let origin = reissue_of.map(|o| {
                    self.commands
                        .get(&o)
                        .map(|e| e.view.line.get_untracked())
                        .unwrap_or_else(|| o.to_string())
                });
                let entry = self.command(command);
                let view = entry.view;
                set_if_changed(view.line, line);
                set_if_changed(view.outcome, outcome);
                set_if_changed(view.exit_code, exit_code);
                set_if_changed(view.evidence, evidence);
                set_if_changed(view.reissue_of, origin);
                set_if_changed(view.reissued, reissued_as.is_some());
                if !entry.placed {
                    entry.placed = true;
                    if !entry.pending.is_empty() && !self.dirty.contains(&command) {
                        // Output that arrived before its block: show it now.
                        self.dirty.push(command);
                    }
                    match turn_view {
                        Some(t) => t.items.update(|c| c.push(TurnItem::Command(view))),
                        None => self.signals.loose.update(|c| c.push(view)),
                    }
                }
            }
            ViewDelta::Output {
                command,
                seq,
                text,
                not_shown,
                ..
            } => {
                let entry = self.command(command);
                if seq <= entry.last_seq {
                    return;
                }
                entry.last_seq = seq;
                if not_shown > 0 {
                    entry.view.not_shown.update(|n| *n += not_shown);
                }
                if text.is_empty() {
                    return;
                }
                entry.pending.push_str(&text);
                if entry.pending.len() > 2 * SHOWN_BYTES {
                    // Only the newest SHOWN_BYTES can ever be on screen.
                    let cut = tail_start(&entry.pending, SHOWN_BYTES);
                    entry.pending.drain(..cut);
                    entry.pending_trimmed = true;
                }
                // A block not placed yet has no `<pre>`; placing it marks it.
                if entry.placed && !self.dirty.contains(&command) {
                    self.dirty.push(command);
                }
            }
            ViewDelta::Settled {
                command,
                through,
                stdout,
                stderr,
                not_shown,
                read,
            } => {
                let entry = self.command(command);
                if through > entry.last_seq {
                    entry.last_seq = through;
                }
                set_if_changed(entry.view.not_shown, not_shown);
                set_if_changed(entry.view.read, read);
                entry.pending.clear();
                entry.pending.push_str(&stdout);
                entry.pending.push_str(&stderr);
                if entry.pending.len() > SHOWN_BYTES {
                    let cut = tail_start(&entry.pending, SHOWN_BYTES);
                    entry.pending.drain(..cut);
                    entry.pending_trimmed = true;
                }
                entry.replace = true;
                if entry.placed && !self.dirty.contains(&command) {
                    self.dirty.push(command);
                }
            }
            ViewDelta::Gap { command, through } => {
                let entry = self.command(command);
                if through > entry.last_seq {
                    entry.last_seq = through;
                }
                set_if_changed(entry.view.gap, true);
            }
        }
    }

    fn end_streaming(&mut self, turn: TurnId) {
        if self
            .signals
            .streaming
            .with_untracked(|s| s.as_ref().is_some_and(|(t, _)| *t == turn))
        {
            self.signals.streaming.set(None);
        }
    }

    fn request_frame(&mut self) {
        if self.frame_requested {
            return;
        }
        let callback = self
            .frame
            .get_or_insert_with(|| Closure::new(on_frame))
            .as_ref()
            .unchecked_ref::<js_sys::Function>()
            .clone();
        if window().request_animation_frame(&callback).is_ok() {
            self.frame_requested = true;
        }
    }
}

fn set_if_changed<T: PartialEq + Send + Sync + 'static>(signal: RwSignal<T>, value: T) {
    if signal.with_untracked(|v| *v != value) {
        signal.set(value);
    }
}

/// Byte index where the last `keep` bytes of `text` start, moved forward to a
/// character boundary.
fn tail_start(text: &str, keep: usize) -> usize {
    let mut start = text.len().saturating_sub(keep);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    start
}

fn on_frame() {
    MODEL.with(|m| {
        let mut guard = m.borrow_mut();
        let Some(model) = guard.as_mut() else { return };
        model.frame_requested = false;
        let dirty = std::mem::take(&mut model.dirty);
        // Reads first (one layout), then writes, then scrolls.
        let mut work = Vec::with_capacity(dirty.len());
        let mut retry = Vec::new();
        for id in dirty {
            let Some(entry) = model.commands.get(&id) else {
                continue;
            };
            match entry.view.output.get_untracked() {
                Some(pre) => {
                    let at_bottom = is_at_bottom(&pre);
                    work.push((id, pre, at_bottom));
                }
                // Not rendered yet (its block is placed later): keep it.
                None => retry.push(id),
            }
        }
        let mut grew = false;
        let mut budget = FRAME_BYTES;
        let mut behind = Vec::new();
        for (id, pre, _) in &work {
            let Some(entry) = model.commands.get_mut(id) else {
                continue;
            };
            let mut trimmed = std::mem::take(&mut entry.pending_trimmed);
            if std::mem::take(&mut entry.replace) {
                clear(&mut entry.dom);
            }
            if entry.pending.len() >= SHOWN_BYTES {
                // Everything shown now would scroll out of the cap: start over
                // with the newest output.
                trimmed |= clear(&mut entry.dom);
                let cut = tail_start(&entry.pending, SHOWN_BYTES);
                entry.pending.drain(..cut);
                trimmed |= cut > 0;
            }
            if budget > 0 && !entry.pending.is_empty() {
                let mut take = entry.pending.len().min(budget);
                while !entry.pending.is_char_boundary(take) {
                    take -= 1;
                }
                let chunk: String = entry.pending.drain(..take).collect();
                budget = budget.saturating_sub(chunk.len().max(1));
                trimmed |= append(pre, &mut entry.dom, &chunk);
                grew = true;
            }
            if !entry.pending.is_empty() {
                behind.push(*id);
            }
            if trimmed {
                set_if_changed(entry.view.trimmed, true);
            }
        }
        for (_, pre, at_bottom) in &work {
            if *at_bottom {
                pre.set_scroll_top(pre.scroll_height());
            }
        }
        if model.stick_to_bottom {
            if let Some(log) = model.signals.log.get_untracked() {
                log.set_scroll_top(log.scroll_height());
            }
        }
        retry.extend(behind);
        model.dirty = retry;
        if !model.dirty.is_empty() || grew {
            // Another frame for blocks that were not mounted yet, and for
            // notes whose signals changed in this one.
            model.request_frame();
        }
    });
}

/// Removes everything shown; true if there was anything.
fn clear(dom: &mut OutputDom) -> bool {
    let had = !dom.segments.is_empty();
    for segment in dom.segments.drain(..) {
        segment.element.remove();
    }
    dom.shown = 0;
    had
}

/// Appends `text` to the output `<pre>`; true if older output was dropped.
fn append(pre: &HtmlPreElement, dom: &mut OutputDom, text: &str) -> bool {
    let mut trimmed = false;
    let document = pre.owner_document().unwrap_or_else(document);
    let mut rest = text;
    while !rest.is_empty() {
        let open = dom.segments.back().is_some_and(|s| !s.closed);
        if !open {
            let Ok(element) = document.create_element("span") else {
                break;
            };
            let text = document.create_text_node("");
            if element.append_child(&text).is_err() || pre.append_child(&element).is_err() {
                break;
            }
            dom.segments.push_back(Segment {
                element: element.unchecked_into(),
                text,
                bytes: 0,
                closed: false,
            });
        }
        let Some(segment) = dom.segments.back_mut() else {
            break;
        };
        // Fill up to the segment size, then on to the next line end.
        let need = SEGMENT_BYTES.saturating_sub(segment.bytes);
        let take = rest
            .as_bytes()
            .get(need..)
            .and_then(|after| after.iter().position(|b| *b == b'\n'))
            .map_or(rest.len(), |i| need + i + 1);
        let (head, tail) = rest.split_at(take);
        if segment.text.append_data(head).is_err() {
            break;
        }
        segment.bytes += head.len();
        segment.closed = segment.bytes >= SEGMENT_BYTES && head.ends_with('\n');
        dom.shown += head.len();
        rest = tail;
    }
    while dom.shown > SHOWN_BYTES && dom.segments.len() > 1 {
        if let Some(first) = dom.segments.pop_front() {
            first.element.remove();
            dom.shown -= first.bytes;
            trimmed = true;
        }
    }
    if dom.shown > SHOWN_BYTES {
        // One line longer than the cap: keep its end.
        if let Some(only) = dom.segments.back_mut() {
            let data = only.text.data();
            let cut = tail_start(&data, SHOWN_BYTES);
            only.text.set_data(&data[cut..]);
            only.bytes = data.len() - cut;
            dom.shown = only.bytes;
            trimmed = true;
        }
    }
    trimmed
}
