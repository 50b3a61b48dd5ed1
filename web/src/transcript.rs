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

use crate::copied;
use crate::i18n::{self, text, tf, tr, Msg};
use crate::ui::{handler, set_if_changed};
use crate::worded::ViewDelta;
use leptos::html::{Div, Pre};
use leptos::prelude::*;
use lifeline_core::flat::FlatMap;
use lifeline_core::render::{md, resolve, runs, steps, Style};
use lifeline_core::view::OutputRead;
use lifeline_core::{
    CommandId, EventSeq, Outcome, ProviderFailureView, ProviderRequestId, ProviderRequestStatus,
    SessionId, TurnId, TurnStatus,
};
use std::cell::RefCell;
use std::collections::VecDeque;
use wasm_bindgen::{prelude::*, JsCast};
use web_sys::{HtmlElement, HtmlPreElement, Text};

/// Output shown per command; older output stays in the journal.
pub const SHOWN_BYTES: usize = 256 * 1024;
/// A display segment closes at the first line end after this many bytes.
const SEGMENT_BYTES: usize = 4 * 1024;
/// Output text added to the page per animation frame, over all commands:
/// laying out new text is the frame's main cost, so a burst of output is
/// shown over several frames instead of in one long task. At 8 KiB, 4 of 7
/// cold first rounds of the 10 MB output benchmark had a task of 57–65 ms
/// (its layout 15–33 ms); at 4 KiB, 2 of 7 had one of 52–53 ms, for
/// about a tenth less throughput (docs/benchmarks.md, "Eighteenth stop").
const FRAME_BYTES: usize = 4 * 1024;

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
    /// `reply` as the controller parsed it.
    pub reply_md: RwSignal<String>,
    /// When the prompt was recorded (ms since the epoch).
    pub at: RwSignal<u64>,
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
    pub text_md: RwSignal<String>,
    pub tool_calls: RwSignal<Vec<String>>,
    pub failure: RwSignal<Option<ProviderFailureView<String>>>,
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
    /// When it was admitted and when it finished (ms since the epoch; 0
    /// and `None` when the controller did not say).
    pub admitted_at: RwSignal<u64>,
    pub finished_at: RwSignal<Option<u64>>,
    /// A settled command's output still being read from the journal, or
    /// unreadable.
    pub read: RwSignal<OutputRead>,
    pub output: NodeRef<Pre>,
    /// The last lines of an output whose middle is not shown.
    pub tail: NodeRef<Pre>,
    pub has_tail: RwSignal<bool>,
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
    /// The last text node, holding text in `style`.
    text: Text,
    style: Style,
    bytes: usize,
    /// Full and ending at a line end: the next text starts a new segment.
    closed: bool,
}

#[derive(Default)]
struct OutputDom {
    segments: VecDeque<Segment>,
    shown: usize,
    /// The style in force after what is drawn (where `pending` starts).
    style: Style,
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
    /// The style in force after the output received so far: the next
    /// chunk's style marks read against it ([`resolve`]).
    style: Style,
    /// The full-output view, when open: its `<pre>`, its position note,
    /// its pages (kept byte range and element, in order) and its scroll
    /// listener.
    full: Option<FullView>,
    /// Kept bytes, once the controller answered a read.
    kept: u64,
    /// The read the controller has not answered yet, if any.
    asking: Option<Ask>,
    tail_asked: bool,
    /// The tail read's answer, until its block is mounted to show it, and
    /// whether it starts mid-output.
    tail_text: Option<(String, bool)>,
    dom: OutputDom,
}

struct Model {
    signals: TranscriptSignals,
    owner: Owner,
    epoch: u32,
    turns: FlatMap<TurnId, TurnView>,
    requests: FlatMap<ProviderRequestId, RequestView>,
    commands: FlatMap<CommandId, CommandEntry>,
    dirty: Vec<CommandId>,
    frame_requested: bool,
    stick_to_bottom: bool,
    /// The reader scrolled up from the newest output ("Jump to latest").
    away: RwSignal<bool>,
    /// The transcript's scroll position at its last scroll event.
    last_top: i32,
    /// A pointer is down in the transcript: following the bottom waits
    /// until it is up, or the control pressed would move away under it
    /// and the release land elsewhere (the click lost).
    pressed: bool,
    frame: Option<Closure<dyn FnMut()>>,
}

thread_local! {
    static MODEL: RefCell<Option<Model>> = const { RefCell::new(None) };
}

/// Installs the model; signals created later belong to `owner`.
pub fn init(signals: TranscriptSignals, owner: Owner) {
    let away = owner.with(|| RwSignal::new(false));
    let tick = owner.with(|| RwSignal::new(js_sys::Date::now() as u64));
    TICK.with(|t| t.set(Some(tick)));
    let _ = set_interval_with_handle(
        move || tick.set(js_sys::Date::now() as u64),
        std::time::Duration::from_millis(1000),
    );
    MODEL.with(|m| {
        *m.borrow_mut() = Some(Model {
            signals,
            owner,
            epoch: 0,
            turns: FlatMap::new(),
            requests: FlatMap::new(),
            commands: FlatMap::new(),
            dirty: Vec::new(),
            frame_requested: false,
            stick_to_bottom: true,
            away,
            last_top: 0,
            pressed: false,
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
///
/// Only a scroll up leaves the bottom: new content landing between our
/// scroll to the bottom and its event leaves the position short of the new
/// bottom without anyone having scrolled away (the transcript stopped
/// following after a few messages that way).
pub fn log_scrolled(element: &web_sys::Element) {
    let top = element.scroll_top();
    let at_bottom = is_at_bottom(element);
    MODEL.with(|m| {
        if let Some(model) = m.borrow_mut().as_mut() {
            if at_bottom {
                model.stick_to_bottom = true;
            } else if top < model.last_top {
                model.stick_to_bottom = false;
            }
            model.last_top = top;
            set_if_changed(model.away, !model.stick_to_bottom);
        }
    });
}

/// A pointer went down in the transcript (`true`) or up anywhere
/// (`false`); once up, the transcript catches up with the bottom if it
/// follows it.
pub fn log_pressed(down: bool) {
    MODEL.with(|m| {
        if let Some(model) = m.borrow_mut().as_mut() {
            let released = model.pressed && !down;
            model.pressed = down;
            if released {
                model.request_frame();
            }
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
        self.last_top = 0;
        self.away.set(false);
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
            reply_md: RwSignal::new(String::new()),
            at: RwSignal::new(0),
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
                admitted_at: RwSignal::new(0),
                finished_at: RwSignal::new(None),
                read: RwSignal::new(OutputRead::Shown),
                output: NodeRef::new(),
                tail: NodeRef::new(),
                has_tail: RwSignal::new(false),
            }),
            placed: false,
            last_seq: EventSeq::ZERO,
            pending: String::new(),
            pending_trimmed: false,
            replace: false,
            style: Style::default(),
            full: None,
            kept: 0,
            asking: None,
            tail_asked: false,
            tail_text: None,
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
                at,
                reply_md,
                ..
            } => {
                let view = self.turn(turn);
                set_if_changed(view.at, at.0);
                set_if_changed(view.reply_md, reply_md);
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
                text_md,
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
                            text_md: RwSignal::new(String::new()),
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
                set_if_changed(view.text_md, text_md);
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
                admitted_at,
                finished_at,
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
                set_if_changed(view.admitted_at, admitted_at.0);
                set_if_changed(view.finished_at, finished_at.map(|f| f.0));
                if outcome.is_terminal() && view.not_shown.get_untracked() > 0 {
                    ask_tail(command, entry);
                }
                if !entry.placed {
                    entry.placed = true;
                    if !entry.pending.is_empty() {
                        // Output that arrived before its block: show it now.
                        mark(&mut self.dirty, command);
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
                    if entry.view.outcome.get_untracked().is_terminal() {
                        ask_tail(command, entry);
                    }
                }
                if text.is_empty() {
                    return;
                }
                let text = resolve(&text, &mut entry.style);
                entry.pending.push_str(&text);
                if entry.pending.len() > 2 * SHOWN_BYTES {
                    // Only the newest SHOWN_BYTES can ever be on screen.
                    let cut = tail_start(&entry.pending, SHOWN_BYTES);
                    drop_pending(&mut entry.pending, &mut entry.dom.style, cut);
                    entry.pending_trimmed = true;
                }
                // A block not placed yet has no `<pre>`; placing it marks it.
                if entry.placed {
                    mark(&mut self.dirty, command);
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
                if not_shown > 0 {
                    ask_tail(command, entry);
                }
                set_if_changed(entry.view.read, read);
                entry.pending.clear();
                entry.style = Style::default();
                entry.dom.style = Style::default();
                entry.pending.push_str(&resolve(&stdout, &mut entry.style));
                entry.pending.push_str(&resolve(&stderr, &mut entry.style));
                if entry.pending.len() > SHOWN_BYTES {
                    let cut = tail_start(&entry.pending, SHOWN_BYTES);
                    drop_pending(&mut entry.pending, &mut entry.dom.style, cut);
                    entry.pending_trimmed = true;
                }
                entry.replace = true;
                if entry.placed {
                    mark(&mut self.dirty, command);
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

/// Marks `command` for the next frame's drawing, once.
fn mark(dirty: &mut Vec<CommandId>, command: CommandId) {
    if !dirty.contains(&command) {
        dirty.push(command);
    }
}

/// Drops `pending`'s first `cut` bytes, keeping the style they set.
fn drop_pending(pending: &mut String, style: &mut Style, cut: usize) {
    runs(&pending[..cut], style, &mut |_, _| {});
    pending.drain(..cut);
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
            place_tail(entry);
            let mut trimmed = std::mem::take(&mut entry.pending_trimmed);
            if std::mem::take(&mut entry.replace) {
                clear(&mut entry.dom);
            }
            if entry.pending.len() >= SHOWN_BYTES {
                // Everything shown now would scroll out of the cap: start over
                // with the newest output.
                trimmed |= clear(&mut entry.dom);
                let cut = tail_start(&entry.pending, SHOWN_BYTES);
                drop_pending(&mut entry.pending, &mut entry.dom.style, cut);
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
        if model.stick_to_bottom && !model.pressed {
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

/// Appends resolved `text` to the output `<pre>` as styled runs; true if
/// older output was dropped.
fn append(pre: &HtmlPreElement, dom: &mut OutputDom, text: &str) -> bool {
    let document = pre.owner_document().unwrap_or_else(document);
    let mut style = dom.style;
    runs(text, &mut style, &mut |s, run| {
        append_run(pre, dom, &document, s, run)
    });
    dom.style = style;
    let mut trimmed = false;
    while dom.shown > SHOWN_BYTES && dom.segments.len() > 1 {
        if let Some(first) = dom.segments.pop_front() {
            first.element.remove();
            dom.shown -= first.bytes;
            trimmed = true;
        }
    }
    if dom.shown > SHOWN_BYTES {
        // One line longer than the cap: keep the end of its last run.
        if let Some(only) = dom.segments.back_mut() {
            let data = only.text.data();
            let cut = tail_start(&data, SHOWN_BYTES);
            only.text.set_data(&data[cut..]);
            let keep: Option<web_sys::Node> = if only.style == Style::default() {
                Some(only.text.clone().into())
            } else {
                only.text.parent_node()
            };
            while let Some(first) = only.element.first_child() {
                if Some(&first) == keep.as_ref() {
                    break;
                }
                let _ = only.element.remove_child(&first);
            }
            only.bytes = data.len() - cut;
            dom.shown = only.bytes;
            trimmed = true;
        }
    }
    trimmed
}

/// A new text node in `parent` for text in `style`: plain text directly,
/// styled text inside a span with the style's fixed class names.
fn styled_text(
    document: &web_sys::Document,
    parent: &web_sys::Element,
    style: Style,
) -> Option<Text> {
    let text = document.create_text_node("");
    if style == Style::default() {
        parent.append_child(&text).ok()?;
    } else {
        let span = document.create_element("span").ok()?;
        span.set_class_name(&style.classes());
        span.append_child(&text).ok()?;
        parent.append_child(&span).ok()?;
    }
    Some(text)
}

fn append_run(
    pre: &HtmlPreElement,
    dom: &mut OutputDom,
    document: &web_sys::Document,
    style: Style,
    text: &str,
) {
    let mut rest = text;
    while !rest.is_empty() {
        let open = dom.segments.back().is_some_and(|s| !s.closed);
        if !open {
            let Ok(element) = document.create_element("span") else {
                break;
            };
            let Some(text) = styled_text(document, &element, style) else {
                break;
            };
            if pre.append_child(&element).is_err() {
                break;
            }
            dom.segments.push_back(Segment {
                element: element.unchecked_into(),
                text,
                style,
                bytes: 0,
                closed: false,
            });
        }
        let Some(segment) = dom.segments.back_mut() else {
            break;
        };
        if segment.style != style {
            let Some(text) = styled_text(document, &segment.element, style) else {
                break;
            };
            segment.text = text;
            segment.style = style;
        }
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
}

/// Prompts longer than this (in bytes or lines) start collapsed.
const LONG_PROMPT_BYTES: usize = 600;
const LONG_PROMPT_LINES: usize = 8;

// The blocks below keep their reactive parts few (the UI's wasm budget):
// copy buttons, "Show more" and the full-output view are plain elements
// whose clicks one handler on the transcript takes ([`clicked`]).

/// The transcript's turns and the commands outside them, in a module of
/// their own ([`crate::lazy`]): a first visit shows none before its first
/// turn. Output that comes before its block is mounted waits in the model
/// ([`on_frame`] retries it), and so does a tail read ([`output_range`]).
#[leptos::wasm_split::wasm_split(transcript, fallible, wasm_split_path = leptos::wasm_split)]
pub fn blocks(t: TranscriptSignals) -> Result<AnyView, leptos::wasm_split::SplitLoaderError> {
    Ok(view! {
        <For each=move || t.turns.get() key=|turn| (turn.id, turn.epoch) let:turn>
            <TurnBlock turn streaming=t.streaming />
        </For>
        <For each=move || t.loose.get() key=|command| (command.id, command.epoch) let:command>
            <CommandBlock command />
        </For>
    }
    .into_any())
}

#[component]
fn TurnBlock(turn: TurnView, streaming: RwSignal<Option<(TurnId, String)>>) -> impl IntoView {
    let preview = move || {
        streaming.with(|s| {
            s.as_ref()
                .filter(|(t, _)| *t == turn.id)
                .map(|(_, text)| text.clone())
        })
    };
    // A prompt never changes once recorded; nor does when it was.
    let long = turn
        .prompt
        .with_untracked(|p| p.len() > LONG_PROMPT_BYTES || p.lines().count() > LONG_PROMPT_LINES);
    view! {
        <div class="turn">
            <div class="prompt">
                <p class="who">
                    {text(Msg::You)} " · " {clock(turn.at.get_untracked())}
                </p>
                <p class="prompt-text" data-collapsed=long.to_string()>
                    {move || turn.prompt.get()}
                </p>
                {long.then(|| view! {
                    <button type="button" class="link" data-act="more" aria-expanded="false">
                        {i18n::now(Msg::ShowMore)}
                    </button>
                })}
            </div>
            <For each=move || turn.items.get() key=TurnItem::key let:item>
                {match item {
                    TurnItem::Request(request) => view! { <RequestBlock request /> }.into_any(),
                    TurnItem::Command(command) => view! { <CommandBlock command /> }.into_any(),
                }}
            </For>
            {move || {
                preview()
                    .map(|text| {
                        // Not announced as it grows: the recorded reply is.
                        view! {
                            <div class="streaming" role="group" aria-labelledby=format!("streaming-{}", turn.id)>
                                <p class="who" id=format!("streaming-{}", turn.id)>
                                    {i18n::text(Msg::Streaming)}
                                </p>
                                <p class="reply-text" aria-live="off">{text}</p>
                            </div>
                        }
                    })
            }}
            {move || {
                turn.status
                    .get()
                    .map(|status| {
                        view! {
                            <div class="reply" data-status=status.as_str()>
                                <div class="reply-head">
                                    <p class="who">{move || tf(Msg::AgentTurn, &[tr(i18n::turn_status(status))])}</p>
                                    <button type="button" class="copy" data-act="copy-reply">{i18n::now(Msg::CopyReply)}</button>
                                </div>
                                {move || match turn.ending.get() {
                                    Some(p) => view! { <p class="reply-text">{p}</p> }.into_any(),
                                    None => view! { <Markdown marked=turn.reply_md /> }.into_any(),
                                }}
                            </div>
                        }
                    })
            }}
            {move || i18n::tokens(i18n::locale(), Msg::TurnTokens, turn.tokens.get()).map(|t| view! { <p class="note tokens">{t}</p> })}
        </div>
    }
}

/// One provider request of a model turn: its step, durable status, text and
/// the tools it called. Rendered from the journal, like everything else.
#[component]
fn RequestBlock(request: RequestView) -> impl IntoView {
    let status = move || request.status.get();
    view! {
        <div class="request" data-status=move || status().as_str()>
            <p class="who">
                {move || {
                    tf(Msg::ModelStep, &[&request.step.get().to_string(), tr(i18n::request_status(status()))])
                }}
            </p>
            <Markdown marked=request.text_md />
            {move || {
                let calls = request.tool_calls.get();
                (!calls.is_empty()).then(|| view! { <p class="note">{move || tf(Msg::Called, &[&calls.join(", ")])}</p> })
            }}
            {move || {
                request
                    .failure
                    .get()
                    .map(|f| {
                        view! {
                            <p class="evidence">
                                {move || {
                                    let (label, advice) = i18n::provider_failure(f.class);
                                    format!("{}: {} {}", tr(label), f.message, tr(advice))
                                }}
                            </p>
                        }
                    })
            }}
            <Show when=move || status() == ProviderRequestStatus::Uncertain>
                <p class="evidence">
                    {text(Msg::NoReplyRecorded)}
                </p>
            </Show>
        </div>
    }
}

#[component]
fn CommandBlock(command: CommandView) -> impl IntoView {
    let outcome = move || command.outcome.get();
    let id = command.id.to_string();
    let more = move || command.not_shown.get() > 0 || command.gap.get() || command.trimmed.get();
    view! {
        <div
            class="command"
            role="group"
            aria-label=move || tf(Msg::CommandName, &[&command.line.get()])
            data-outcome=move || outcome().as_str()
            data-command=id
        >
            <div class="command-head">
                <code class="command-line">{move || command.line.get()}</code>
                <span class="outcome" data-outcome=move || outcome().as_str()>
                    {move || tr(i18n::outcome(outcome()))}
                </span>
                {move || {
                    command.exit_code.get().map(|code| view! { <span class="exit">{move || tf(Msg::Exit, &[&code.to_string()])}</span> })
                }}
                <span class="duration">{move || duration(command)}</span>
                <button type="button" class="copy" data-act="copy-output">{i18n::now(Msg::CopyOutput)}</button>
            </div>
            {move || command.reissue_of.get().map(|line| view! {
                <p class="origin">{move || tf(Msg::ReissueOf, &[&line])}</p>
            })}
            <Show when=move || command.reissued.get()>
                <p class="origin">{text(Msg::ReissuedLater)}</p>
            </Show>
            {move || command.evidence.get().map(|note| view! { <p class="evidence">{note}</p> })}
            <Show when=move || command.gap.get() || command.trimmed.get()>
                <p class="note">{text(Msg::EarlierOutput)}</p>
            </Show>
            {move || match command.read.get() {
                OutputRead::Shown => None,
                OutputRead::Loading => Some(Msg::LoadingOutput),
                OutputRead::Unreadable => Some(Msg::OutputUnreadable),
            }.map(|m| view! { <p class="note">{text(m)}</p> })}
            // Output is not read out as it streams; the outcome badge is.
            <pre class="output" tabindex="0" aria-live="off" node_ref=command.output></pre>
            {move || {
                let n = command.not_shown.get();
                (n > 0).then(|| view! { <p class="note">{move || tf(Msg::BytesNotShown, &[&n.to_string()])}</p> })
            }}
            <div class="tail" hidden=move || !command.has_tail.get()>
                <p class="note">{text(Msg::LastLines)}</p>
                <pre class="output" tabindex="0" node_ref=command.tail></pre>
            </div>
            <div class="stored-output" hidden=move || !more()>
                <button type="button" data-act="full" aria-expanded="false">{i18n::now(Msg::ViewFullOutput)}</button>
                <button type="button" data-act="download">{i18n::now(Msg::DownloadOutput)}</button>
            </div>
        </div>
    }
}

/// When something happened, as the reader's local time of day.
fn clock(at: u64) -> impl IntoView {
    let d = js_sys::Date::new(&JsValue::from_f64(at as f64));
    let shown = format!("{:02}:{:02}", d.get_hours(), d.get_minutes());
    view! { <time datetime=String::from(d.to_iso_string())>{shown}</time> }
}

/// A running command's elapsed time (on the page's display clock, which
/// ticks only while something runs) or a finished one's duration (from the
/// controller's recorded times).
fn duration(command: CommandView) -> Option<String> {
    let start = command.admitted_at.get();
    if start == 0 {
        return None;
    }
    if let Some(end) = command.finished_at.get() {
        return Some(tf(Msg::Took, &[&span(end.saturating_sub(start))]));
    }
    let running = command.outcome.with(|o| {
        matches!(
            o,
            Outcome::Admitted | Outcome::Dispatched | Outcome::Running
        )
    });
    running.then(|| {
        let now = TICK.with(|t| t.get()).map_or(0, |t| t.get());
        tf(Msg::RunningFor, &[&span(now.saturating_sub(start))])
    })
}

thread_local! {
    /// The display clock of running commands, set every second. Owned by
    /// the transcript's owner ([`init`]): created inside a block's effect,
    /// it would be disposed with that effect's next run.
    static TICK: std::cell::Cell<Option<RwSignal<u64>>> = const { std::cell::Cell::new(None) };
}

/// A duration for people: `0.4 s`, `12 s`, `3 min 05 s`, `2 h 03 min`.
pub fn span(ms: u64) -> String {
    let s = ms / 1000;
    if ms < 10_000 {
        format!("{}.{} s", s, (ms % 1000) / 100)
    } else if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s / 60) % 60)
    }
}

/// Markdown the controller parsed ([`lifeline_core::render`]), built as DOM
/// nodes: every text is a text node, every element one of a fixed set.
#[component]
fn Markdown(marked: RwSignal<String>) -> impl IntoView {
    let node = NodeRef::<Div>::new();
    Effect::new(move |_| {
        let Some(div) = node.get() else { return };
        marked.with(|marked| build_markdown(&div, marked));
    });
    // Also `reply-text`: what a reply's text is, rendered or not.
    view! { <div class="md reply-text" node_ref=node></div> }
}

fn build_markdown(root: &web_sys::Element, marked: &str) {
    root.set_text_content(None);
    let document = root.owner_document().unwrap_or_else(document);
    let mut stack: Vec<web_sys::Element> = vec![root.clone()];
    for (kind, text) in steps(marked) {
        let Some(parent) = stack.last().cloned() else {
            break;
        };
        let element = |tag: &str| document.create_element(tag).ok();
        match kind {
            md::TEXT => {
                let _ = parent.append_child(&document.create_text_node(text));
            }
            md::CLOSE => {
                if stack.len() > 1 {
                    stack.pop();
                }
            }
            md::CODE_BLOCK => {
                let (Some(wrap), Some(pre), Some(code)) =
                    (element("div"), element("pre"), element("code"))
                else {
                    continue;
                };
                wrap.set_class_name("code-block");
                wrap.set_inner_html(
                    "<button type=\"button\" class=\"copy\" data-act=\"copy-code\"></button>",
                );
                if let Some(button) = wrap.first_element_child() {
                    button.set_text_content(Some(i18n::now(Msg::CopyCode)));
                }
                code.set_text_content(Some(text));
                let _ = pre.set_attribute("tabindex", "0");
                let _ = pre.append_child(&code);
                let _ = wrap.append_child(&pre);
                let _ = parent.append_child(&wrap);
            }
            kind => {
                let tag = match kind {
                    md::CODE => "code",
                    md::BREAK => "br",
                    md::RULE => "hr",
                    md::OPEN_QUOTE => "blockquote",
                    md::OPEN_LIST => "ul",
                    md::OPEN_ORDERED => "ol",
                    md::OPEN_ITEM => "li",
                    md::OPEN_EM => "em",
                    md::OPEN_STRONG => "strong",
                    md::OPEN_DEL => "del",
                    md::OPEN_LINK => "a",
                    // Headings are bold lines, not headings: a reply's
                    // headings are not the page's outline.
                    _ => "p",
                };
                let Some(e) = element(tag) else { continue };
                match kind {
                    md::CODE => e.set_text_content(Some(text)),
                    md::OPEN_HEADING => e.set_class_name(&format!("md-h md-h{text}")),
                    md::OPEN_ORDERED => {
                        let _ = e.set_attribute("start", text);
                    }
                    md::OPEN_LINK => {
                        // The core let only http, https and mailto through.
                        let _ = e.set_attribute("href", text);
                        let _ = e.set_attribute("target", "_blank");
                        let _ = e.set_attribute("rel", "noopener noreferrer");
                    }
                    _ => {}
                }
                let _ = parent.append_child(&e);
                if kind >= md::OPEN_P {
                    stack.push(e);
                }
            }
        }
    }
}

/// A click in the transcript: copy buttons, "Show more", and a command's
/// stored output (view, page, download) are plain elements marked with
/// `data-act`, handled here.
pub fn clicked(event: web_sys::MouseEvent) {
    let Some(button) = event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|t| t.closest("button[data-act]").ok().flatten())
    else {
        return;
    };
    let act = button.get_attribute("data-act").unwrap_or_default();
    let near = |selector: &str| button.closest(selector).ok().flatten();
    let text_of = |e: Option<web_sys::Element>, selector: &str| {
        e.and_then(|e| e.query_selector(selector).ok().flatten())
            .and_then(|e| e.text_content())
            .unwrap_or_default()
    };
    let command = near(".command").and_then(|c| {
        c.get_attribute("data-command")
            .and_then(|id| id.parse::<CommandId>().ok())
    });
    match act.as_str() {
        "copy-output" => {
            let block = near(".command");
            let shown = |selector: &str| {
                block
                    .as_ref()
                    .and_then(|b| b.query_selector(selector).ok().flatten())
                    .is_some_and(|e| !e.has_attribute("hidden"))
            };
            let line = text_of(block.clone(), ".command-line");
            let head = text_of(block.clone(), "pre.output");
            let tail = shown(".tail").then(|| text_of(block.clone(), ".tail pre.output"));
            // Output the page does not hold is not on the clipboard either,
            // and the copy says so rather than pass for all of it.
            let mut read = OutputRead::default();
            if let Some(c) = command {
                with_entry(c, |entry| read = entry.view.read.get_untracked());
            }
            let claim = read.copy_claim(shown(".stored-output"));
            let (text, said) = copied::copied(
                &copied::Shown {
                    line: &line,
                    head: &head,
                    tail: tail.as_deref(),
                },
                claim,
            );
            copy_as(button, text, Msg::CopyOutput, said);
        }
        "copy-reply" => {
            let text = text_of(near(".reply"), ".md, .reply-text");
            copy(button, text, Msg::CopyReply);
        }
        "copy-code" => {
            let text = text_of(button.parent_element(), "code");
            copy(button, text, Msg::CopyCode);
        }
        "more" => {
            let open = button.get_attribute("aria-expanded").as_deref() != Some("true");
            if let Some(p) = button.previous_element_sibling() {
                let _ = p.set_attribute("data-collapsed", &(!open).to_string());
            }
            let _ = button.set_attribute("aria-expanded", &open.to_string());
            button.set_text_content(Some(i18n::now(if open {
                Msg::ShowLess
            } else {
                Msg::ShowMore
            })));
        }
        "full" => {
            if let (Some(c), Some(block)) = (command, near(".command")) {
                toggle_full(c, &block, &button);
            }
        }
        "full-start" | "full-end" => {
            if let Some(c) = command {
                full_to(c, act == "full-end");
            }
        }
        "download" => {
            if let Some(c) = command {
                crate::io::request(lifeline_protocol::PageToController::DownloadOutput {
                    command: c,
                });
            }
        }
        _ => {}
    }
}

/// Puts `text` on the clipboard; the button says "Copied" (or "Copy
/// failed") for two seconds, then `label` again.
fn copy(button: web_sys::Element, text: String, label: Msg) {
    copy_as(button, text, label, Msg::Copied)
}

/// [`copy`], saying `copied` once it is done.
fn copy_as(button: web_sys::Element, text: String, label: Msg, copied: Msg) {
    let promise = window().navigator().clipboard().write_text(&text);
    wasm_bindgen_futures::spawn_local(async move {
        let done = wasm_bindgen_futures::JsFuture::from(promise).await.is_ok();
        button.set_text_content(Some(i18n::now(if done { copied } else { Msg::CopyFailed })));
        set_timeout(
            move || button.set_text_content(Some(i18n::now(label))),
            std::time::Duration::from_millis(2000),
        );
    });
}

/// Shown while the reader has scrolled up from the newest output.
#[component]
pub fn JumpToLatest() -> impl IntoView {
    let away = MODEL.with(|m| m.borrow().as_ref().map(|m| m.away));
    let away = away.unwrap_or_else(|| RwSignal::new(false));
    view! {
        <button type="button" class="jump" hidden=move || !away.get() on:click=handler(move |_| jump_to_latest())>
            {text(Msg::JumpToLatest)}
        </button>
    }
}

/// Scrolls to the newest output and follows it again.
pub fn jump_to_latest() {
    MODEL.with(|m| {
        let mut guard = m.borrow_mut();
        let Some(model) = guard.as_mut() else { return };
        model.stick_to_bottom = true;
        set_if_changed(model.away, false);
        if let Some(log) = model.signals.log.get_untracked() {
            log.set_scroll_top(log.scroll_height());
        }
        model.request_frame();
    });
}

/// Kept bytes asked for per read of the full-output view.
const PAGE_BYTES: u64 = 16 * 1024;
/// Pages the full-output view holds at once; scrolling on reads the next
/// and lets the farthest go, so 10 MB never lays out more than this.
const MAX_PAGES: usize = 4;
/// The tail shown under a long output's head.
const TAIL_BYTES: u64 = 4 * 1024;
/// Within this many pixels of an end, the view reads on.
const EDGE_PX: i32 = 400;

/// An open full-output view.
struct FullView {
    region: web_sys::Element,
    pre: HtmlElement,
    note: web_sys::Element,
    pages: VecDeque<(u64, u64, web_sys::Element)>,
    _scroll: Closure<dyn FnMut()>,
}

/// Which read of a command's kept output is outstanding.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ask {
    Tail,
    /// A page after (true) or before (false) the view's pages, or the
    /// first page of a fresh view (`Fresh`).
    Next(bool),
    Fresh,
}

fn ask(command: CommandId, entry: &mut CommandEntry, what: Ask, offset: u64, len: u64) {
    if entry.asking.is_some() {
        return;
    }
    let from_end = offset == u64::MAX;
    let message = lifeline_protocol::PageToController::ReadOutput {
        command,
        offset: if from_end { 0 } else { offset },
        len,
        from_end,
    };
    entry.asking = Some(what);
    // Sent once this task is over: a delta that asks arrives while the
    // page's controller host is busy handing it over.
    wasm_bindgen_futures::spawn_local(async move {
        if !crate::io::request(message) {
            with_entry(command, |e| e.asking = None);
        }
    });
}

fn with_entry(command: CommandId, f: impl FnOnce(&mut CommandEntry)) {
    MODEL.with(|m| {
        if let Some(e) = m
            .borrow_mut()
            .as_mut()
            .and_then(|model| model.commands.get_mut(&command))
        {
            f(e);
        }
    });
}

/// A finished output with a middle not shown: read its last lines.
fn ask_tail(command: CommandId, entry: &mut CommandEntry) {
    if !entry.tail_asked {
        entry.tail_asked = true;
        ask(command, entry, Ask::Tail, u64::MAX, TAIL_BYTES);
    }
}

/// The controller's answer to a `ReadOutput`.
pub fn output_range(command: CommandId, offset: u64, end: u64, kept: u64, text: String) {
    MODEL.with(|m| {
        let mut guard = m.borrow_mut();
        let Some(model) = guard.as_mut() else { return };
        let Some(entry) = model.commands.get_mut(&command) else {
            return;
        };
        entry.kept = kept;
        match entry.asking.take() {
            Some(Ask::Tail) => {
                // From the first whole line, unless at the start.
                entry.tail_text = Some((text, offset > 0));
                if !place_tail(entry) {
                    // Its block is not mounted yet: the next frames retry.
                    mark(&mut model.dirty, command);
                    model.request_frame();
                }
            }
            Some(what) => {
                let Some(full) = entry.full.as_mut() else {
                    return;
                };
                place_page(full, what, offset, end, &text);
                let (from, to) = match (full.pages.front(), full.pages.back()) {
                    (Some(f), Some(b)) => (f.0, b.1),
                    _ => (0, 0),
                };
                full.note.set_text_content(Some(&i18n::now_f(
                    Msg::FullOutputWindow,
                    &[&from.to_string(), &to.to_string(), &kept.to_string()],
                )));
                // A short first page fills no scroll area: read on.
                let short = full.pre.scroll_height() <= full.pre.client_height();
                if short && end < kept {
                    ask(command, entry, Ask::Next(true), end, PAGE_BYTES);
                }
            }
            None => {}
        }
    });
}

/// Shows a tail read's answer in its block; false while the block is not
/// mounted.
fn place_tail(entry: &mut CommandEntry) -> bool {
    let Some(pre) = entry.view.tail.get_untracked() else {
        return entry.tail_text.is_none();
    };
    let Some((text, from_line)) = entry.tail_text.take() else {
        return true;
    };
    pre.set_text_content(None);
    let mut shown = false;
    // One block: styled runs directly in the `<pre>` would each be a block
    // of their own (`.output > span`).
    if let Ok(block) = document().create_element("span") {
        shown = styled(&block, &text, from_line);
        let _ = pre.append_child(&block);
    }
    set_if_changed(entry.view.has_tail, shown);
    true
}

fn place_page(full: &mut FullView, what: Ask, start: u64, end: u64, text: &str) {
    let Ok(page) = document().create_element("span") else {
        return;
    };
    styled(&page, text, false);
    let (pre, pages) = (&full.pre, &mut full.pages);
    if what == Ask::Fresh {
        for (_, _, e) in pages.drain(..) {
            e.remove();
        }
        pre.set_scroll_top(0);
    }
    if what == Ask::Next(false) {
        let first = pre.first_child();
        let _ = pre.insert_before(&page, first.as_ref());
        // Keep what the reader sees in place.
        if let Some(e) = page.dyn_ref::<HtmlElement>() {
            pre.set_scroll_top(pre.scroll_top() + e.offset_height());
        }
        pages.push_front((start, end, page));
        while pages.len() > MAX_PAGES {
            if let Some((_, _, e)) = pages.pop_back() {
                e.remove();
            }
        }
    } else {
        let _ = pre.append_child(&page);
        pages.push_back((start, end, page));
        if what == Ask::Fresh && start > 0 {
            // "End": the reader wants the last lines in view.
            pre.set_scroll_top(pre.scroll_height());
        }
        while pages.len() > MAX_PAGES {
            if let Some((_, _, e)) = pages.pop_front() {
                let height = e.dyn_ref::<HtmlElement>().map_or(0, |e| e.offset_height());
                e.remove();
                pre.set_scroll_top(pre.scroll_top() - height);
            }
        }
    }
}

/// Marked output read on its own as styled runs appended to `parent`,
/// from its first byte (or its first whole line, `from_line`).
fn styled(parent: &web_sys::Element, text: &str, from_line: bool) -> bool {
    let document = parent.owner_document().unwrap_or_else(document);
    let mut style = Style::default();
    let text = resolve(text, &mut Style::default());
    let from = if from_line {
        text.find('\n').map_or(text.len(), |i| i + 1)
    } else {
        0
    };
    runs(&text[..from], &mut style, &mut |_, _| {});
    runs(&text[from..], &mut style, &mut |s, run| {
        if let Some(node) = styled_text(&document, parent, s) {
            let _ = node.append_data(run);
        }
    });
    from < text.len()
}

/// Opens (or closes) the full-output view of `command` in `block`.
fn toggle_full(command: CommandId, block: &web_sys::Element, button: &web_sys::Element) {
    with_entry(command, |entry| {
        entry.asking = None;
        if let Some(full) = entry.full.take() {
            full.region.remove();
            let _ = button.set_attribute("aria-expanded", "false");
            return;
        }
        let Some(full) = full_view(command, entry, block) else {
            return;
        };
        let _ = button.set_attribute("aria-expanded", "true");
        entry.full = Some(full);
        ask(command, entry, Ask::Fresh, 0, PAGE_BYTES);
    });
}

fn full_view(
    command: CommandId,
    entry: &CommandEntry,
    block: &web_sys::Element,
) -> Option<FullView> {
    let document = document();
    let region = document.create_element("div").ok()?;
    region.set_class_name("full-output");
    let _ = region.set_attribute("role", "region");
    let line = entry.view.line.get_untracked();
    let _ = region.set_attribute("aria-label", &i18n::now_f(Msg::FullOutputOf, &[&line]));
    region.set_inner_html(
        "<div class=\"full-head\"><p class=\"note\" aria-live=\"polite\"></p>\
         <button type=\"button\" data-act=\"full-start\"></button>\
         <button type=\"button\" data-act=\"full-end\"></button></div>\
         <pre class=\"output full\" tabindex=\"0\"></pre>",
    );
    for (act, label) in [("start", Msg::OutputStart), ("end", Msg::OutputEnd)] {
        if let Ok(Some(b)) = region.query_selector(&format!("[data-act=full-{act}]")) {
            b.set_text_content(Some(i18n::now(label)));
        }
    }
    let note = region.query_selector("p").ok()??;
    let pre: HtmlElement = region.query_selector("pre").ok()??.dyn_into().ok()?;
    let scroll = Closure::<dyn FnMut()>::new(move || full_scrolled(command));
    pre.set_onscroll(Some(scroll.as_ref().unchecked_ref()));
    block.append_child(&region).ok()?;
    Some(FullView {
        region,
        pre,
        note,
        pages: VecDeque::new(),
        _scroll: scroll,
    })
}

/// The full-output view jumps to its start or its end.
fn full_to(command: CommandId, end: bool) {
    with_entry(command, |entry| {
        entry.asking = None;
        let offset = if end { u64::MAX } else { 0 };
        ask(command, entry, Ask::Fresh, offset, PAGE_BYTES);
    });
}

/// The full-output view scrolled: near an end, read the next page there.
fn full_scrolled(command: CommandId) {
    with_entry(command, |entry| {
        let kept = entry.kept;
        let Some(full) = entry.full.as_ref() else {
            return;
        };
        let pre = &full.pre;
        let top = pre.scroll_top();
        let bottom = pre.scroll_height() - top - pre.client_height();
        let (Some(first), Some(last)) = (
            full.pages.front().map(|p| p.0),
            full.pages.back().map(|p| p.1),
        ) else {
            return;
        };
        if bottom < EDGE_PX && last < kept {
            ask(command, entry, Ask::Next(true), last, PAGE_BYTES);
        } else if top < EDGE_PX && first > 0 {
            let from = first.saturating_sub(PAGE_BYTES);
            ask(command, entry, Ask::Next(false), from, first - from);
        }
    });
}
