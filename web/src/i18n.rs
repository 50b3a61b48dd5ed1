//! Locale catalogs: every text the page itself renders, in English and
//! German.
//!
//! A plain `match` per locale (no crate, no runtime parsing): a key without a
//! text in either locale does not compile. English is the UI contract: the
//! accessible names of DESIGN.md are these English texts, exactly, and the
//! end-to-end tests find things by them.
//!
//! Texts composed elsewhere (controller notices, the recovery card's summary
//! and evidence, failure causes, browser error messages) arrive as they are
//! and are not translated here; only their frames are.
//!
//! The locale lives in one page-wide signal: components read it through
//! [`tr`] and [`text`] (tracked), so a switch re-renders the texts in place
//! without disturbing any other state.

use leptos::prelude::*;
use lifeline_core::recovery::{Action, Dimension, Verdict};
use lifeline_core::{Outcome, ProviderRequestStatus, TurnStatus};

/// The `localStorage` key that keeps the reader's choice.
pub const STORAGE_KEY: &str = "lifeline-locale";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Locale {
    #[default]
    En,
    De,
}

impl Locale {
    pub const ALL: [Locale; 2] = [Locale::En, Locale::De];

    /// The BCP 47 tag, for `<html lang>` and storage.
    pub fn tag(self) -> &'static str {
        match self {
            Locale::En => "en",
            Locale::De => "de",
        }
    }

    /// The language's own name, the same in every locale.
    pub fn endonym(self) -> &'static str {
        match self {
            Locale::En => "English",
            Locale::De => "Deutsch",
        }
    }

    /// `de`, `de-DE`, `DE-at` → German; `en`, `en-US` → English; else none.
    pub fn from_tag(tag: &str) -> Option<Locale> {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or_default();
        Locale::ALL
            .into_iter()
            .find(|l| primary.eq_ignore_ascii_case(l.tag()))
    }

    /// The first of the browser's preferred languages this page speaks;
    /// English if none.
    pub fn detect<'a>(tags: impl IntoIterator<Item = &'a str>) -> Locale {
        tags.into_iter()
            .find_map(Locale::from_tag)
            .unwrap_or_default()
    }
}

macro_rules! catalog {
    ($($key:ident => $en:literal, $de:literal;)*) => {
        /// A message key; each has a text in every locale.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Msg { $($key,)* }

        #[cfg(test)]
        impl Msg {
            pub const ALL: &'static [Msg] = &[$(Msg::$key,)*];
        }

        /// The text of `msg` in `locale`. `{0}`, `{1}` are parameters for
        /// [`fill`].
        pub fn t(locale: Locale, msg: Msg) -> &'static str {
            match locale {
                Locale::En => match msg { $(Msg::$key => $en,)* },
                Locale::De => match msg { $(Msg::$key => $de,)* },
            }
        }
    };
}

catalog! {
    // The shell.
    Sessions => "Sessions", "Sitzungen";
    SessionDetails => "Session details", "Sitzungsdetails";
    CloseSessions => "Close sessions", "Sitzungen schließen";
    NewSession => "New session", "Neue Sitzung";
    NoSessionYet => "No session yet.", "Noch keine Sitzung.";
    MoreSessionsLater => "More than one session arrives in a later build.",
        "Mehrere Sitzungen kommen in einer späteren Version.";
    // Connection status.
    Connecting => "Connecting…", "Verbinde…";
    Recovering => "Recovering…", "Stelle wieder her…";
    Connected => "Connected", "Verbunden";
    Following => "Following another tab (read-only)", "Folgt einem anderen Tab (nur lesen)";
    NotConnected => "Not connected: {0}", "Nicht verbunden: {0}";
    JournalUnavailable => "the journal is unavailable: {0}", "das Journal ist nicht verfügbar: {0}";
    // Notices.
    Stopped => "Lifeline stopped: {0}.", "Lifeline wurde angehalten: {0}.";
    Reload => "Reload", "Neu laden";
    StorageNotice => "Storage is best-effort: the browser may clear this history under storage pressure.",
        "Der Speicher ist nicht dauerhaft: Der Browser kann diesen Verlauf bei Speicherknappheit löschen.";
    KeepData => "Keep data on this device", "Daten auf diesem Gerät behalten";
    PersistAsking => "Asking the browser…", "Frage den Browser…";
    PersistRefused => "The browser declined; this history stays best-effort. Browsers often grant it to installed or frequently used sites.",
        "Der Browser hat abgelehnt; dieser Verlauf bleibt nicht dauerhaft. Browser gewähren es oft installierten oder häufig genutzten Seiten.";
    PersistFailed => "Could not ask the browser: {0}", "Der Browser konnte nicht gefragt werden: {0}";
    Dismiss => "Dismiss", "Ausblenden";
    RestartChecking => "The controller worker stopped and was restarted; checking whether running commands continued…",
        "Der Controller-Worker wurde beendet und neu gestartet; prüfe, ob laufende Befehle weiterliefen…";
    RestartNoneRunning => "The controller worker stopped and was restarted; no commands were running.",
        "Der Controller-Worker wurde beendet und neu gestartet; es liefen keine Befehle.";
    RestartOneContinued => "The controller worker stopped and was restarted; the running command continued.",
        "Der Controller-Worker wurde beendet und neu gestartet; der laufende Befehl lief weiter.";
    RestartOneStopped => "The controller worker stopped and was restarted; the running command did not continue (the transcript shows what is known about it).",
        "Der Controller-Worker wurde beendet und neu gestartet; der laufende Befehl lief nicht weiter (das Protokoll zeigt, was über ihn bekannt ist).";
    RestartAllContinued => "The controller worker stopped and was restarted; all {0} running commands continued.",
        "Der Controller-Worker wurde beendet und neu gestartet; alle {0} laufenden Befehle liefen weiter.";
    RestartSomeContinued => "The controller worker stopped and was restarted; {0} of {1} running commands continued (the transcript shows what is known about the others).",
        "Der Controller-Worker wurde beendet und neu gestartet; {0} von {1} laufenden Befehlen liefen weiter (das Protokoll zeigt, was über die anderen bekannt ist).";
    ControllerNotRunning => "The controller is not running; try again in a moment.",
        "Der Controller läuft nicht; versuche es gleich noch einmal.";
    ControllerNotMessage => "The controller sent something that is not a message; it was ignored.",
        "Der Controller hat etwas gesendet, das keine Nachricht ist; es wurde ignoriert.";
    FromController => "From the controller: {0}", "Vom Controller: {0}";
    ControllerUnreachable => "Could not reach the controller: {0}", "Der Controller war nicht erreichbar: {0}";
    RuntimeAskedAgain => "The controller asked again for runtime {0} generation {1}; the running worker was kept.",
        "Der Controller hat erneut Runtime {0} Generation {1} angefordert; der laufende Worker wurde behalten.";
    RuntimeEnvUnknown => "The controller sent an environment for runtime {0} generation {1}, which this tab is not running.",
        "Der Controller hat eine Umgebung für Runtime {0} Generation {1} gesendet, die dieser Tab nicht ausführt.";
    RuntimeNotMessage => "A runtime worker sent something that is not a message; it was ignored.",
        "Ein Runtime-Worker hat etwas gesendet, das keine Nachricht ist; es wurde ignoriert.";
    RuntimeFailed => "A runtime worker failed and was stopped: {0}", "Ein Runtime-Worker ist fehlgeschlagen und wurde beendet: {0}";
    FromRuntime => "From a runtime worker: {0}", "Von einem Runtime-Worker: {0}";
    RuntimeRelayFailed => "Could not connect a runtime worker to the controller: {0}",
        "Ein Runtime-Worker konnte nicht mit dem Controller verbunden werden: {0}";
    // Reasons the page stopped (shown inside `Stopped`).
    ControllerSpawnFailed => "could not start the controller worker: {0}",
        "der Controller-Worker konnte nicht gestartet werden: {0}";
    ControllerStartFailed => "could not start it: {0}", "er konnte nicht gestartet werden: {0}";
    ControllerTooManyRestarts => "the controller worker stopped {0} times within a minute (last: {1})",
        "der Controller-Worker wurde innerhalb einer Minute {0}-mal beendet (zuletzt: {1})";
    ControllerNoStart => "it did not start within {0} s", "er ist nicht innerhalb von {0} s gestartet";
    ControllerNoHeartbeat => "no heartbeat for {0} s", "kein Lebenszeichen seit {0} s";
    NoWebLocks => "this browser has no Web Locks, which keep two tabs from writing the journal at once",
        "dieser Browser hat keine Web Locks, die verhindern, dass zwei Tabs gleichzeitig ins Journal schreiben";
    ElectionFailed => "the leader election failed: {0}", "die Leader-Wahl ist fehlgeschlagen: {0}";
    // The transcript.
    Transcript => "Transcript", "Verlauf";
    NoTurnsYet => "No turns yet. Type a message below. Each line that starts with “$ ” runs as a command in this browser, for example: $ echo hi",
        "Noch keine Runden. Schreib unten eine Nachricht. Jede Zeile, die mit „$ “ beginnt, läuft als Befehl in diesem Browser, zum Beispiel: $ echo hi";
    You => "You", "Du";
    Streaming => "Streaming (not yet saved)", "Wird gestreamt (noch nicht gespeichert)";
    AgentTurn => "Agent · turn {0}", "Agent · Runde {0}";
    ModelStep => "Model · step {0} · {1}", "Modell · Schritt {0} · {1}";
    Called => "Called: {0}", "Aufgerufen: {0}";
    NoReplyRecorded => "No reply was recorded: the model may have answered. It was not asked again.",
        "Es wurde keine Antwort aufgezeichnet: Das Modell hat vielleicht geantwortet. Es wurde nicht erneut gefragt.";
    CommandName => "Command: {0}", "Befehl: {0}";
    Exit => "exit {0}", "Exit-Code {0}";
    EarlierOutput => "Earlier output is in the journal and not shown here.",
        "Frühere Ausgabe steht im Journal und wird hier nicht gezeigt.";
    BytesNotShown => "{0} bytes of output are stored but not shown",
        "{0} Bytes Ausgabe sind gespeichert, aber nicht angezeigt";
    // Turn status.
    TurnCompleted => "completed", "abgeschlossen";
    TurnFailed => "failed", "fehlgeschlagen";
    TurnInterrupted => "interrupted", "unterbrochen";
    TurnCancelled => "cancelled", "abgebrochen";
    // Provider request status.
    RequestWaiting => "waiting", "wartet";
    RequestReplied => "replied", "beantwortet";
    RequestUncertain => "uncertain", "ungewiss";
    // Command outcomes (DESIGN.md).
    OutcomeAdmitted => "admitted", "angenommen";
    OutcomeNotDispatched => "not dispatched", "nicht übergeben";
    OutcomeDispatched => "dispatched", "übergeben";
    OutcomeMayHaveStarted => "may have started", "vielleicht gestartet";
    OutcomeRunning => "running", "läuft";
    OutcomeTimedOut => "timed out", "Zeit überschritten";
    OutcomeLost => "lost", "verloren";
    // The composer.
    FollowingNote => "Another tab is running Lifeline, so this one follows it read-only. Close that tab to take over here.",
        "Ein anderer Tab führt Lifeline aus, daher folgt dieser ihm nur lesend. Schließ den anderen Tab, um hier zu übernehmen.";
    Message => "Message", "Nachricht";
    MessagePlaceholder => "Message, or $ command", "Nachricht oder $ Befehl";
    Send => "Send", "Senden";
    Stop => "Stop", "Stopp";
    StartingSession => "Starting the session…", "Starte die Sitzung…";
    Stopping => "Stopping…", "Halte an…";
    StartCancelled => "Start cancelled.", "Start abgebrochen.";
    OneWaiting => "1 message waiting", "1 Nachricht wartet";
    ManyWaiting => "{0} messages waiting", "{0} Nachrichten warten";
    NotSentNoController => "Not sent: the controller is not running.",
        "Nicht gesendet: Der Controller läuft nicht.";
    NotSentNoRandomness => "Not sent: this browser gave no randomness for an id.",
        "Nicht gesendet: Dieser Browser lieferte keinen Zufall für eine ID.";
    // The details pane.
    Details => "Details", "Details";
    Environment => "Environment", "Umgebung";
    EnvWorker => "This tab's worker sandbox (OPFS workspace)", "Worker-Sandbox dieses Tabs (OPFS-Arbeitsbereich)";
    EnvPickFolder => "A local folder…", "Ein lokaler Ordner …";
    EnvFolderUnsupported => "A local folder (this browser cannot open one)", "Ein lokaler Ordner (dieser Browser kann keinen öffnen)";
    EnvFolderNamed => "Local folder: {0}", "Lokaler Ordner: {0}";
    EnvironmentHint => "Where a session's files live. Choosing another environment starts a new session there; this session and its files stay as they are. Lifeline never deletes files in a folder you opened.", "Wo die Dateien einer Sitzung liegen. Eine andere Umgebung zu wählen startet dort eine neue Sitzung; diese Sitzung und ihre Dateien bleiben, wie sie sind. Lifeline löscht nie Dateien in einem Ordner, den Sie geöffnet haben.";
    EnvConfirmFolder => "Start a new session in the folder “{0}”? The agent can read, change and delete files in it. This session and its files stay as they are.", "Eine neue Sitzung im Ordner „{0}“ starten? Der Agent kann darin Dateien lesen, ändern und löschen. Diese Sitzung und ihre Dateien bleiben, wie sie sind.";
    EnvConfirmWorker => "Start a new session in this tab's worker sandbox? This session and its files stay as they are.", "Eine neue Sitzung in der Worker-Sandbox dieses Tabs starten? Diese Sitzung und ihre Dateien bleiben, wie sie sind.";
    EnvStartThere => "Start there", "Dort starten";
    EnvPickFailed => "The folder could not be opened: {0}", "Der Ordner konnte nicht geöffnet werden: {0}";
    EnvRememberFailed => "The folder could not be remembered, so nothing was started: {0}", "Der Ordner konnte nicht gespeichert werden, daher wurde nichts gestartet: {0}";
    EnvPermissionRefused => "Access to the folder “{0}” was not allowed, so nothing was started. Press the button again to be asked again.", "Der Zugriff auf den Ordner „{0}“ wurde nicht erlaubt, daher wurde nichts gestartet. Drücken Sie die Schaltfläche erneut, um wieder gefragt zu werden.";
    EnvStateWorker => "Environment: this tab's worker sandbox.", "Umgebung: die Worker-Sandbox dieses Tabs.";
    EnvStateFolder => "Environment: your folder “{0}”.", "Umgebung: Ihr Ordner „{0}“.";
    TeardownRemovedOnDelete => "Lifeline owns its folder: Archive keeps it, Delete removes it.", "Der Ordner gehört Lifeline: Archivieren behält ihn, Löschen entfernt ihn.";
    TeardownNeverRemoved => "It is yours: Lifeline never deletes it.", "Er gehört Ihnen: Lifeline löscht ihn nie.";
    ReopenReady => "A new runtime can open it again.", "Eine neue Runtime kann ihn wieder öffnen.";
    ReopenAfterPermission => "The browser will ask for your permission before it is opened again.", "Der Browser fragt Sie um Erlaubnis, bevor er wieder geöffnet wird.";
    ReopenImpossible => "It cannot be opened again in this browser.", "Er kann in diesem Browser nicht wieder geöffnet werden.";
    ReopenUnknown => "Whether it can be opened again was not checked yet.", "Ob er wieder geöffnet werden kann, wurde noch nicht geprüft.";
    Language => "Language", "Sprache";
    Role => "Role", "Rolle";
    Runtime => "Runtime", "Runtime";
    Journal => "Journal", "Journal";
    Position => "Position", "Position";
    Storage => "Storage", "Speicher";
    ControllerRestarts => "Controller restarts", "Controller-Neustarts";
    OfflineStart => "Offline start", "Offline-Start";
    RoleLeader => "leader (this tab writes the journal)", "Leader (dieser Tab schreibt das Journal)";
    RoleFollower => "follower (read-only)", "Follower (nur lesen)";
    RoleDeciding => "deciding", "wird entschieden";
    RuntimeLine => "{0} (generation {1}), {2}", "{0} (Generation {1}), {2}";
    Attached => "attached", "verbunden";
    NotAttached => "not attached", "nicht verbunden";
    None => "none", "keine";
    JournalOpen => "IndexedDB, schema {0}", "IndexedDB, Schema {0}";
    JournalOpening => "opening", "wird geöffnet";
    Unavailable => "unavailable: {0}", "nicht verfügbar: {0}";
    JournalNotOpen => "not open yet", "noch nicht geöffnet";
    StorageLine => "{0} of {1} used, {2}", "{0} von {1} belegt, {2}";
    Persisted => "persisted", "dauerhaft";
    BestEffort => "best-effort", "nicht dauerhaft";
    Unknown => "unknown", "unbekannt";
    OfflinePreparing => "preparing", "wird vorbereitet";
    OfflineReady => "ready", "bereit";
    // Evidence export and import.
    Evidence => "Evidence", "Nachweise";
    ExportEvidence => "Export evidence", "Nachweise exportieren";
    ImportEvidence => "Import evidence", "Nachweise importieren";
    ImportedEvidence => "Imported evidence", "Importierte Nachweise";
    ImportedReadOnly => "Imported evidence (read-only)", "Importierte Nachweise (nur lesen)";
    ImportedFrom => " — {0} from {1}", " — {0} aus {1}";
    BackToSession => "Back to my session", "Zurück zu meiner Sitzung";
    ArchiveNotShown => "{0} bytes of output are in the archive's artifacts, not shown",
        "{0} Bytes Ausgabe liegen in den Artefakten des Archivs und werden nicht angezeigt";
    ModelRequest => "Model request · {0}", "Modellanfrage · {0}";
    ToolsUsed => "Tools: {0}", "Werkzeuge: {0}";
    ExportShort => "The export arrived with {0} of {1} bytes; try again.",
        "Der Export kam mit {0} von {1} Bytes an; versuche es noch einmal.";
    CouldNotSave => "Could not save {0}: {1}", "{0} konnte nicht gespeichert werden: {1}";
    NothingToExport => "There is no session to export yet.", "Es gibt noch keine Sitzung zum Exportieren.";
    CouldNotRead => "Could not read {0}: {1}", "{0} konnte nicht gelesen werden: {1}";
    // The recovery card (DESIGN.md).
    Recovery => "Recovery", "Wiederherstellung";
    Resume => "Resume", "Wiederaufnehmen";
    ContinueFromHistory => "Continue from history", "Aus dem Verlauf fortsetzen";
    StartFresh => "Start fresh", "Neu beginnen";
    InspectWorkspace => "Inspect workspace", "Arbeitsbereich ansehen";
    Archive => "Archive", "Archivieren";
    Confirm => "Confirm", "Bestätigen";
    ConfirmStartFresh => "Confirm start fresh", "Neu beginnen bestätigen";
    ConfirmArchive => "Confirm archive", "Archivieren bestätigen";
    Cancel => "Cancel", "Abbrechen";
    NotPossibleNow => "{0} is not possible now: {1}", "{0} ist jetzt nicht möglich: {1}";
    WhatSurvived => "What survived", "Was erhalten ist";
    Conversation => "Conversation", "Unterhaltung";
    Workspace => "Workspace", "Arbeitsbereich";
    Credentials => "Credentials", "Zugangsdaten";
    Processes => "Processes", "Prozesse";
    Attachments => "Attachments", "Anhänge";
    Survived => "survived", "erhalten";
    Missing => "missing", "fehlt";
    Uncertain => "uncertain", "ungewiss";
    Lost => "lost", "verloren";
    NotApplicable => "not applicable", "nicht zutreffend";
    UncertainActions => "Uncertain actions", "Ungewisse Aktionen";
    EarlierFailures => "Earlier, separate failures:", "Frühere, getrennte Fehler:";
    UncertainName => "Uncertain: {0}", "Ungewiss: {0}";
    MarkedDone => "marked done", "als erledigt markiert";
    MarkedNotDone => "marked not done", "als nicht erledigt markiert";
    Reissued => "re-issued", "erneut ausgeführt";
    Verify => "Verify", "Prüfen";
    MarkDone => "Mark done", "Als erledigt markieren";
    MarkNotDone => "Mark not done", "Als nicht erledigt markieren";
    Reissue => "Re-issue", "Erneut ausführen";
    ConfirmReissue => "Confirm re-issue", "Erneut ausführen bestätigen";
    // The workspace browser (DESIGN.md).
    ReadOnlyStopped => "Read-only: the agent is stopped", "Nur lesen: Der Agent ist angehalten";
    FirstEntriesOnly => "Only the first entries are listed.", "Nur die ersten Einträge sind aufgeführt.";
    CloseWorkspace => "Close workspace", "Arbeitsbereich schließen";
    // The Profiles dialog.
    Profiles => "Profiles", "Profile";
    Close => "Close", "Schließen";
    Saved => "Saved “{0}”.", "„{0}“ gespeichert.";
    UnreadableProfile => "Unreadable profile: {0}", "Unlesbares Profil: {0}";
    SavedProfiles => "Saved profiles", "Gespeicherte Profile";
    NoProfilesYet => "No profiles yet.", "Noch keine Profile.";
    WaitingForController => "Waiting for the controller…", "Warte auf den Controller…";
    ApiKeySet => "API key set", "API-Schlüssel gesetzt";
    NoApiKey => "no API key", "kein API-Schlüssel";
    SelectedMark => " (selected)", " (ausgewählt)";
    LaunchesUse => "New launches of this session use “{0}”.", "Neue Starts dieser Sitzung verwenden „{0}“.";
    UseForSession => "Use for this session", "Für diese Sitzung verwenden";
    Edit => "Edit", "Bearbeiten";
    Delete => "Delete", "Löschen";
    DeleteQuestion => "Delete “{0}”?", "„{0}“ löschen?";
    Deleting => "Deleting “{0}”…", "Lösche „{0}“…";
    ConfirmDelete => "Confirm delete", "Löschen bestätigen";
    EditProfile => "Edit profile", "Profil bearbeiten";
    NewProfile => "New profile", "Neues Profil";
    NotSavedFix => "The profile was not saved: fix the marked fields.",
        "Das Profil wurde nicht gespeichert: Korrigiere die markierten Felder.";
    Saving => "Saving “{0}”…", "Speichere „{0}“…";
    NotSavedNoController => "Not saved: the controller is not running.",
        "Nicht gespeichert: Der Controller läuft nicht.";
    CancelEditing => "Cancel editing", "Bearbeiten abbrechen";
    Name => "Name", "Name";
    Provider => "Provider", "Anbieter";
    BuiltInAgent => "Built-in local agent", "Eingebauter lokaler Agent";
    OpenAiCompatible => "OpenAI-compatible", "OpenAI-kompatibel";
    Anthropic => "Anthropic", "Anthropic";
    BaseUrl => "Base URL", "Basis-URL";
    Model => "Model", "Modell";
    ApiKey => "API key", "API-Schlüssel";
    KeyStored => "A key is stored. Leave this empty to keep it.",
        "Ein Schlüssel ist gespeichert. Lass das Feld leer, um ihn zu behalten.";
    KeyNew => "Stored encrypted in this browser; never shown again.",
        "Wird verschlüsselt in diesem Browser gespeichert und nie wieder angezeigt.";
    RemoveKey => "Remove the stored key", "Gespeicherten Schlüssel entfernen";
    EnvVars => "Environment variables", "Umgebungsvariablen";
    EnvHint => "One NAME=value per line. Commands see them; they are not secret.",
        "Eine Zeile NAME=Wert je Variable. Befehle sehen sie; sie sind nicht geheim.";
    KeyEnvLabel => "Give commands the API key as", "API-Schlüssel an Befehle geben als";
    KeyEnvHint => "Optional: a variable name, e.g. OPENAI_API_KEY. Empty keeps the key from commands.",
        "Optional: ein Variablenname, z. B. OPENAI_API_KEY. Leer hält den Schlüssel von Befehlen fern.";
    Tools => "Tools", "Werkzeuge";
    AllowJs => "Allow js", "js erlauben";
    BudgetPerTurn => "Budget per turn", "Budget pro Runde";
    MaxSteps => "Max steps", "Max. Schritte";
    MaxCommands => "Max commands", "Max. Befehle";
    MaxTokens => "Max tokens", "Max. Tokens";
    MaxMinutes => "Max minutes", "Max. Minuten";
    SaveProfile => "Save profile", "Profil speichern";
    // Profile form errors.
    EnterName => "Enter a name.", "Gib einen Namen ein.";
    AtMostBytes => "At most {0} bytes.", "Höchstens {0} Bytes.";
    UrlScheme => "Start the URL with http:// or https://.", "Beginne die URL mit http:// oder https://.";
    EnterModel => "Enter the model's name.", "Gib den Namen des Modells ein.";
    KeyEnvTaken => "{0} is already set under Environment variables.",
        "{0} ist schon unter Umgebungsvariablen gesetzt.";
    KeyEnvNoKey => "This profile has no API key to give; enter one or leave this empty.",
        "Dieses Profil hat keinen API-Schlüssel zum Weitergeben; gib einen ein oder lass das Feld leer.";
    EnterMinutes => "Enter minutes above 0 and at most 1440 (up to 3 decimals).",
        "Gib Minuten über 0 und höchstens 1440 ein (bis zu 3 Nachkommastellen).";
    EnterWhole => "Enter a whole number above 0.", "Gib eine ganze Zahl über 0 ein.";
    NotVarName => "“{0}” is not a variable name: use letters, digits and _, not starting with a digit.",
        "„{0}“ ist kein Variablenname: Verwende Buchstaben, Ziffern und _, nicht mit einer Ziffer am Anfang.";
    ReservedVar => "{0} is set by the runtime and cannot be changed.",
        "{0} wird von der Runtime gesetzt und kann nicht geändert werden.";
    LineProblem => "Line {0}: {1}", "Zeile {0}: {1}";
    WriteNameValue => "write NAME=value.", "schreib NAME=Wert.";
    SetTwice => "{0} is set twice.", "{0} ist doppelt gesetzt.";
    ValueTooLong => "the value is longer than {0} bytes.", "der Wert ist länger als {0} Bytes.";
    AtMostVars => "At most {0} variables.", "Höchstens {0} Variablen.";
}

/// Fills `{0}`…`{9}` in `template` with `args`; anything else is kept.
pub fn fill(template: &str, args: &[&str]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.as_bytes() {
            [d @ b'0'..=b'9', b'}', ..] => {
                out.push_str(args.get(usize::from(d - b'0')).copied().unwrap_or_default());
                rest = &after[2..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `msg` in `locale`, filled with `args`.
pub fn tf_in(locale: Locale, msg: Msg, args: &[&str]) -> String {
    fill(t(locale, msg), args)
}

/// Decimal units, one decimal place, the locale's decimal mark: `1.2 MB`,
/// `1,2 MB`.
pub fn bytes(locale: Locale, n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} B");
    }
    // Tenths in integer arithmetic, rounded (float formatting costs the UI's
    // wasm budget several KB).
    let (mut div, mut unit) = (1u64, 0);
    while n / div >= 1000 && unit < UNITS.len() - 1 {
        div *= 1000;
        unit += 1;
    }
    let tenths = (u128::from(n) * 10 + u128::from(div / 2)) / u128::from(div);
    let mark = if locale == Locale::De { ',' } else { '.' };
    format!("{}{mark}{} {}", tenths / 10, tenths % 10, UNITS[unit])
}

// Core enums to keys: their English texts equal the core's `label()`s.

pub fn outcome(o: Outcome) -> Msg {
    match o {
        Outcome::Admitted => Msg::OutcomeAdmitted,
        Outcome::NotDispatched => Msg::OutcomeNotDispatched,
        Outcome::Dispatched => Msg::OutcomeDispatched,
        Outcome::MayHaveStarted => Msg::OutcomeMayHaveStarted,
        Outcome::Running => Msg::OutcomeRunning,
        Outcome::Completed => Msg::TurnCompleted,
        Outcome::Failed => Msg::TurnFailed,
        Outcome::Cancelled => Msg::TurnCancelled,
        Outcome::TimedOut => Msg::OutcomeTimedOut,
        Outcome::Lost => Msg::OutcomeLost,
    }
}

pub fn turn_status(s: TurnStatus) -> Msg {
    match s {
        TurnStatus::Completed => Msg::TurnCompleted,
        TurnStatus::Failed => Msg::TurnFailed,
        TurnStatus::Interrupted => Msg::TurnInterrupted,
        TurnStatus::Cancelled => Msg::TurnCancelled,
    }
}

pub fn request_status(s: ProviderRequestStatus) -> Msg {
    match s {
        ProviderRequestStatus::Waiting => Msg::RequestWaiting,
        ProviderRequestStatus::Replied => Msg::RequestReplied,
        ProviderRequestStatus::Failed => Msg::TurnFailed,
        ProviderRequestStatus::Uncertain => Msg::RequestUncertain,
    }
}

pub fn action(a: Action) -> Msg {
    match a {
        Action::Resume => Msg::Resume,
        Action::ContinueFromHistory => Msg::ContinueFromHistory,
        Action::StartFresh => Msg::StartFresh,
        Action::InspectWorkspace => Msg::InspectWorkspace,
        Action::Archive => Msg::Archive,
    }
}

/// The button that confirms `a` (only those that `confirms()` ask).
pub fn confirm(a: Action) -> Msg {
    match a {
        Action::StartFresh => Msg::ConfirmStartFresh,
        Action::Archive => Msg::ConfirmArchive,
        _ => Msg::Confirm,
    }
}

pub fn dimension(d: Dimension) -> Msg {
    match d {
        Dimension::Conversation => Msg::Conversation,
        Dimension::Workspace => Msg::Workspace,
        Dimension::Credentials => Msg::Credentials,
        Dimension::Processes => Msg::Processes,
        Dimension::Attachments => Msg::Attachments,
    }
}

pub fn verdict(v: Verdict) -> Msg {
    match v {
        Verdict::Survived => Msg::Survived,
        Verdict::Missing => Msg::Missing,
        Verdict::Uncertain => Msg::Uncertain,
        Verdict::Lost => Msg::Lost,
        Verdict::NotApplicable => Msg::NotApplicable,
    }
}

// The page-wide locale.

thread_local! {
    // Reference-counted, so no component owner disposes it.
    static LOCALE: ArcRwSignal<Locale> = ArcRwSignal::new(Locale::En);
}

/// The current locale (tracked).
pub fn locale() -> Locale {
    LOCALE.with(|l| l.get())
}

/// The current locale, for texts composed once (notices, form errors).
pub fn locale_untracked() -> Locale {
    LOCALE.with(|l| l.get_untracked())
}

/// `msg` in the current locale (tracked).
pub fn tr(msg: Msg) -> &'static str {
    t(locale(), msg)
}

/// `msg` in the current locale filled with `args` (tracked).
pub fn tf(msg: Msg, args: &[&str]) -> String {
    tf_in(locale(), msg, args)
}

/// `msg` in the current locale, untracked.
pub fn now(msg: Msg) -> &'static str {
    t(locale_untracked(), msg)
}

/// The notice once the restarted controller knows how many of the commands
/// that were running continued.
pub fn restart_summary(l: Locale, running: u32, continued: u32) -> String {
    match (running, continued) {
        (0, _) => t(l, Msg::RestartNoneRunning).into(),
        (1, 1) => t(l, Msg::RestartOneContinued).into(),
        (1, _) => t(l, Msg::RestartOneStopped).into(),
        (r, c) if c >= r => tf_in(l, Msg::RestartAllContinued, &[&r.to_string()]),
        (r, c) => tf_in(
            l,
            Msg::RestartSomeContinued,
            &[&c.to_string(), &r.to_string()],
        ),
    }
}

/// `msg` in the current locale filled with `args`, untracked.
pub fn now_f(msg: Msg, args: &[&str]) -> String {
    tf_in(locale_untracked(), msg, args)
}

/// A reactive text for a view or an attribute: follows the locale. One
/// closure type for every key keeps the wasm small.
pub fn text(msg: Msg) -> impl Fn() -> &'static str + Copy + Send + Sync + 'static {
    move || tr(msg)
}

/// The stored choice, else the browser's preferred languages.
pub fn init() {
    let window = web_sys::window();
    let stored = window
        .as_ref()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
        .and_then(|tag| Locale::from_tag(&tag));
    let chosen = stored.unwrap_or_else(|| {
        let Some(navigator) = window.as_ref().map(|w| w.navigator()) else {
            return Locale::En;
        };
        let mut tags: Vec<String> = navigator
            .languages()
            .iter()
            .filter_map(|v| v.as_string())
            .collect();
        if tags.is_empty() {
            tags.extend(navigator.language());
        }
        Locale::detect(tags.iter().map(String::as_str))
    });
    apply(chosen);
}

/// The reader picked `locale`: keep it and apply it.
pub fn choose(locale: Locale) {
    if let Some(storage) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
        let _ = storage.set_item(STORAGE_KEY, locale.tag());
    }
    apply(locale);
}

fn apply(locale: Locale) {
    LOCALE.with(|l| {
        if l.get_untracked() != locale {
            l.set(locale);
        }
    });
    if let Some(html) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = html.set_attribute("lang", locale.tag());
    }
}

/// The `Language` select for the details pane.
#[component]
pub fn LanguageSelect() -> impl IntoView {
    view! {
        <label for="language">{text(Msg::Language)}</label>
        <select
            id="language"
            prop:value=move || locale().tag()
            on:change:target=move |ev| {
                if let Some(l) = Locale::from_tag(&ev.target().value()) {
                    choose(l);
                }
            }
        >
            {Locale::ALL
                .map(|l| {
                    view! {
                        <option value=l.tag() lang=l.tag() selected=move || locale() == l>
                            {l.endonym()}
                        </option>
                    }
                })}
        </select>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_a_text_in_every_locale() {
        assert!(Msg::ALL.len() > 100);
        for &msg in Msg::ALL {
            for locale in Locale::ALL {
                let text = t(locale, msg);
                assert!(!text.trim().is_empty(), "{msg:?} in {locale:?}");
            }
            // Parameters agree: a German text uses the same `{n}`s.
            let params = |l| {
                let text = t(l, msg);
                (0..10)
                    .filter(|n| text.contains(&format!("{{{n}}}")))
                    .collect::<Vec<_>>()
            };
            assert_eq!(params(Locale::En), params(Locale::De), "{msg:?}");
        }
    }

    #[test]
    fn the_restart_notice_says_what_ran_on() {
        let en = |r, c| restart_summary(Locale::En, r, c);
        assert!(en(0, 0).ends_with("no commands were running."));
        assert!(en(1, 1).ends_with("the running command continued."));
        assert!(en(1, 0).contains("the running command did not continue"));
        assert!(en(3, 3).ends_with("all 3 running commands continued."));
        assert!(en(3, 1).contains("1 of 3 running commands continued"));
        assert!(restart_summary(Locale::De, 2, 2).contains("alle 2 laufenden Befehle"));
        for (r, c) in [(0, 0), (1, 1), (1, 0), (3, 3), (3, 1)] {
            assert!(!en(r, c).contains('{'), "{r} {c}");
        }
    }

    #[test]
    fn english_accessible_names_are_the_design_contract() {
        // DESIGN.md, "Accessible names (the UI contract)", plus the names the
        // end-to-end tests use.
        let table = [
            (Msg::Sessions, "Sessions"),
            (Msg::NewSession, "New session"),
            (Msg::Transcript, "Transcript"),
            (Msg::Message, "Message"),
            (Msg::Send, "Send"),
            (Msg::Stop, "Stop"),
            (Msg::CommandName, "Command: {0}"),
            (Msg::Recovery, "Recovery"),
            (Msg::Resume, "Resume"),
            (Msg::ContinueFromHistory, "Continue from history"),
            (Msg::StartFresh, "Start fresh"),
            (Msg::InspectWorkspace, "Inspect workspace"),
            (Msg::Archive, "Archive"),
            (Msg::Details, "Details"),
            (Msg::Conversation, "Conversation"),
            (Msg::Workspace, "Workspace"),
            (Msg::Credentials, "Credentials"),
            (Msg::Processes, "Processes"),
            (Msg::Attachments, "Attachments"),
            (Msg::Survived, "survived"),
            (Msg::Missing, "missing"),
            (Msg::Uncertain, "uncertain"),
            (Msg::Lost, "lost"),
            (Msg::NotApplicable, "not applicable"),
            (Msg::ReadOnlyStopped, "Read-only: the agent is stopped"),
            (Msg::Environment, "Environment"),
            (Msg::Language, "Language"),
            (Msg::ConfirmStartFresh, "Confirm start fresh"),
            (Msg::ConfirmArchive, "Confirm archive"),
            (Msg::ConfirmReissue, "Confirm re-issue"),
            (Msg::SessionDetails, "Session details"),
            (Msg::Profiles, "Profiles"),
            (Msg::SavedProfiles, "Saved profiles"),
            (Msg::SaveProfile, "Save profile"),
            (Msg::UseForSession, "Use for this session"),
            (Msg::Name, "Name"),
            (Msg::Provider, "Provider"),
            (Msg::Model, "Model"),
            (Msg::BaseUrl, "Base URL"),
            (Msg::ApiKey, "API key"),
            (Msg::ApiKeySet, "API key set"),
            (Msg::SelectedMark, " (selected)"),
            (Msg::ImportedReadOnly, "Imported evidence (read-only)"),
        ];
        for (msg, english) in table {
            assert_eq!(t(Locale::En, msg), english, "{msg:?}");
        }
        assert_eq!(
            tf_in(Locale::En, Msg::CommandName, &["sleep 60"]),
            "Command: sleep 60"
        );
        // German names differ where the word does.
        assert_eq!(t(Locale::De, Msg::Send), "Senden");
        assert_eq!(t(Locale::De, Msg::Message), "Nachricht");
        assert_eq!(t(Locale::De, Msg::Resume), "Wiederaufnehmen");
    }

    #[test]
    fn core_labels_map_to_keys_with_the_same_english() {
        for o in Outcome::ALL {
            assert_eq!(t(Locale::En, outcome(o)), o.label());
        }
        for a in Action::ALL {
            assert_eq!(t(Locale::En, action(a)), a.label());
            if a.confirms() {
                assert_eq!(
                    t(Locale::En, confirm(a)),
                    format!("Confirm {}", a.label().to_lowercase())
                );
            }
        }
        for d in Dimension::ALL {
            assert_eq!(t(Locale::En, dimension(d)), d.label());
        }
        for v in [
            Verdict::Survived,
            Verdict::Missing,
            Verdict::Uncertain,
            Verdict::Lost,
            Verdict::NotApplicable,
        ] {
            assert_eq!(t(Locale::En, verdict(v)), v.label());
        }
        for s in [
            TurnStatus::Completed,
            TurnStatus::Failed,
            TurnStatus::Interrupted,
            TurnStatus::Cancelled,
        ] {
            assert_eq!(t(Locale::En, turn_status(s)), s.as_str());
        }
        for s in [
            ProviderRequestStatus::Waiting,
            ProviderRequestStatus::Replied,
            ProviderRequestStatus::Failed,
            ProviderRequestStatus::Uncertain,
        ] {
            assert_eq!(t(Locale::En, request_status(s)), s.as_str());
        }
    }

    #[test]
    fn the_browser_languages_choose_the_locale() {
        assert_eq!(Locale::detect(["de-DE", "en-US"]), Locale::De);
        assert_eq!(Locale::detect(["de"]), Locale::De);
        assert_eq!(Locale::detect(["DE-at"]), Locale::De);
        assert_eq!(Locale::detect(["de_CH"]), Locale::De);
        assert_eq!(Locale::detect(["en-US", "de-DE"]), Locale::En);
        assert_eq!(Locale::detect(["en-US"]), Locale::En);
        // The first language this page speaks wins.
        assert_eq!(Locale::detect(["fr-FR", "de-DE"]), Locale::De);
        assert_eq!(Locale::detect(["fr-FR", "ja"]), Locale::En);
        assert_eq!(Locale::detect(["dem", "des-x"]), Locale::En);
        assert_eq!(Locale::detect([]), Locale::En);
        assert_eq!(Locale::from_tag("de"), Some(Locale::De));
        assert_eq!(Locale::from_tag("en"), Some(Locale::En));
        assert_eq!(Locale::from_tag(""), None);
        for l in Locale::ALL {
            assert_eq!(Locale::from_tag(l.tag()), Some(l));
        }
    }

    #[test]
    fn parameters_are_filled_in_place() {
        assert_eq!(
            fill("{0} of {1} used, {2}", &["1", "2", "x"]),
            "1 of 2 used, x"
        );
        assert_eq!(fill("{1} then {0}", &["a", "b"]), "b then a");
        assert_eq!(fill("{0} and {0}", &["a"]), "a and a");
        assert_eq!(fill("a {x} {", &[]), "a {x} {");
        assert_eq!(fill("missing {3}", &["a"]), "missing ");
        assert_eq!(
            tf_in(Locale::De, Msg::ManyWaiting, &["3"]),
            "3 Nachrichten warten"
        );
        assert_eq!(
            tf_in(
                Locale::En,
                Msg::NotPossibleNow,
                &["Resume", "the runtime is gone"]
            ),
            "Resume is not possible now: the runtime is gone"
        );
        assert_eq!(
            tf_in(Locale::De, Msg::DeleteQuestion, &["Lokal"]),
            "„Lokal“ löschen?"
        );
    }

    #[test]
    fn sizes_read_like_the_brief() {
        assert_eq!(bytes(Locale::En, 999), "999 B");
        assert_eq!(bytes(Locale::En, 1_200_000), "1.2 MB");
        assert_eq!(bytes(Locale::En, 10_000_000_000), "10.0 GB");
        assert_eq!(bytes(Locale::De, 1_200_000), "1,2 MB");
        assert_eq!(bytes(Locale::En, 1_000), "1.0 kB");
        assert_eq!(bytes(Locale::En, 999_999), "1000.0 kB");
        assert_eq!(bytes(Locale::En, 1_290_000), "1.3 MB");
    }
}
