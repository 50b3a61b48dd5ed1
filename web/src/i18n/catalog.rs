//! The catalogs: every key the page renders, with its text in each locale.
//! A key without a text in either locale does not compile; English is the
//! UI contract (the accessible names of DESIGN.md).
//!
//! Both languages are authored here, side by side. The page's wasm carries
//! only the English column: the German one costs the page nothing until a
//! reader asks for it. `cargo xtask build` compiles this very file and
//! writes the German column to the bundle's `i18n/de.json` (see
//! [`super::german`]); native builds, the tests and xtask, keep it inline.

use super::Locale;

macro_rules! catalog {
    ($($key:ident => $en:literal, $de:literal;)*) => {
        /// A message key; each has a text in every locale.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Msg { $($key,)* }

        impl Msg {
            #[cfg(any(test, not(target_arch = "wasm32")))]
            #[allow(dead_code)] // read by the tests and by xtask
            pub const ALL: &'static [Msg] = &[$(Msg::$key,)*];

            /// How many keys there are: the German asset has one text each.
            pub const COUNT: usize = [$(stringify!($key),)*].len();

            /// The keys' names in order: a German asset written for another
            /// key list would put texts under the wrong keys.
            pub const FINGERPRINT: u32 = fnv1a(concat!($(stringify!($key), ",",)*).as_bytes());
        }

        /// The text of `msg` in `locale`. `{0}`, `{1}` are parameters for
        /// [`fill`].
        pub fn t(locale: Locale, msg: Msg) -> &'static str {
            let en = match msg { $(Msg::$key => $en,)* };
            match locale {
                Locale::En => en,
                #[cfg(any(test, not(target_arch = "wasm32")))]
                Locale::De => match msg { $(Msg::$key => $de,)* },
                // Until the asset has arrived the page stays in English.
                #[cfg(not(any(test, not(target_arch = "wasm32"))))]
                Locale::De => super::german::text(msg as usize).unwrap_or(en),
            }
        }
    };
}

// One hash for both catalogs' key lists (the phrases' is in lifeline-words).
use lifeline_words::fnv1a;

catalog! {
    // The shell.
    Sessions => "Sessions", "Sitzungen";
    SessionDetails => "Session details", "Sitzungsdetails";
    CloseSessions => "Close sessions", "Sitzungen schließen";
    NewSession => "New session", "Neue Sitzung";
    NoSessionYet => "No session yet.", "Noch keine Sitzung.";
    UntitledSession => "Untitled session", "Unbenannte Sitzung";
    Rename => "Rename", "Umbenennen";
    SessionName => "Session name", "Name der Sitzung";
    SaveName => "Save name", "Namen speichern";
    SearchSessions => "Search sessions", "Sitzungen suchen";
    NoSessionMatches => "No session matches.", "Keine Sitzung passt.";
    SessionReady => "ready", "bereit";
    SessionRunning => "running", "läuft";
    SessionFailed => "failed", "fehlgeschlagen";
    SessionUncertain => "uncertain", "ungewiss";
    SessionArchived => "archived", "archiviert";
    SessionInSandbox => "sandbox", "Sandbox";
    SessionInFolder => "folder “{0}”", "Ordner „{0}“";
    ContinuedFrom => "continued from “{0}”", "fortgesetzt aus „{0}“";
    ContinuedIn => "continued in “{0}”", "fortgesetzt in „{0}“";
    BackgroundNote => "Sessions keep working in the background, up to 3 at once; opening one more stops the runtime of the idle one opened longest ago. Its files and transcript stay.",
        "Sitzungen arbeiten im Hintergrund weiter, bis zu 3 gleichzeitig; wer eine weitere öffnet, hält die Laufzeit der untätigen an, die am längsten nicht geöffnet war. Dateien und Verlauf bleiben.";
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
    NewJournal => "Start a new journal", "Neues Journal beginnen";
    RepairJournal => "Repair journal", "Journal reparieren";
    JournalGoneStatus => "the stored history cannot be reached", "der gespeicherte Verlauf ist nicht erreichbar";
    JournalReadOnlyStatus => "read-only, the journal is damaged", "nur lesen, das Journal ist beschädigt";
    HistoryGone => "The history Lifeline stored in this browser before is gone (the site's data was cleared or the journal was deleted); this is a new journal. Only evidence you exported keeps what it held.",
        "Der Verlauf, den Lifeline zuvor in diesem Browser gespeichert hat, ist weg (die Websitedaten wurden gelöscht oder das Journal wurde gelöscht); dies ist ein neues Journal. Nur exportierte Nachweise bewahren, was er enthielt.";
    StorageNotice => "Storage is best-effort: the browser may clear this history under storage pressure.",
        "Der Speicher ist nicht dauerhaft: Der Browser kann diesen Verlauf bei Speicherknappheit löschen.";
    KeepData => "Keep data on this device", "Daten auf diesem Gerät behalten";
    PersistAsking => "Asking the browser…", "Frage den Browser…";
    PersistRefused => "The browser declined; this history stays best-effort. Browsers often grant it to installed or frequently used sites.",
        "Der Browser hat abgelehnt; dieser Verlauf bleibt nicht dauerhaft. Browser gewähren es oft installierten oder häufig genutzten Seiten.";
    PersistFailed => "Could not ask the browser: {0}", "Der Browser konnte nicht gefragt werden: {0}";
    Dismiss => "Dismiss", "Ausblenden";
    GermanUnavailable => "The German texts could not be loaded, so Lifeline stays in English. Reload to try again.",
        "Die deutschen Texte konnten nicht geladen werden, daher bleibt Lifeline auf Englisch. Neu laden, um es noch einmal zu versuchen.";
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
    TurnTokens => "Tokens: {0} in · {1} out", "Tokens: {0} ein · {1} aus";
    NoReplyRecorded => "No reply was recorded: the model may have answered. It was not asked again.",
        "Es wurde keine Antwort aufgezeichnet: Das Modell hat vielleicht geantwortet. Es wurde nicht erneut gefragt.";
    CommandName => "Command: {0}", "Befehl: {0}";
    Exit => "exit {0}", "Exit-Code {0}";
    EarlierOutput => "Earlier output is in the journal and not shown here.",
        "Frühere Ausgabe steht im Journal und wird hier nicht gezeigt.";
    LoadingOutput => "Loading output…", "Ausgabe wird geladen…";
    OutputUnreadable => "The output could not be read from the journal.",
        "Die Ausgabe konnte nicht aus dem Journal gelesen werden.";
    BytesNotShown => "{0} bytes of output are stored but not shown",
        "{0} Bytes Ausgabe sind gespeichert, aber nicht angezeigt";
    CopyOutput => "Copy output", "Ausgabe kopieren";
    CopyReply => "Copy reply", "Antwort kopieren";
    CopyCode => "Copy code", "Code kopieren";
    Copied => "Copied", "Kopiert";
    CopyFailed => "Copy failed", "Kopieren fehlgeschlagen";
    CopiedOnlyShown => "Copied what is shown", "Angezeigtes kopiert";
    CopiedOnlyShownNote => "Only the output shown was copied; Download output has all of it.",
        "Nur die angezeigte Ausgabe wurde kopiert; „Ausgabe herunterladen“ enthält sie ganz.";
    CopiedWhileLoadingNote => "The output was still loading from the journal and is not in this copy.",
        "Die Ausgabe wurde noch aus dem Journal geladen und ist nicht in dieser Kopie.";
    CopiedUnreadableNote => "The output could not be read from the journal and is not in this copy.",
        "Die Ausgabe konnte nicht aus dem Journal gelesen werden und ist nicht in dieser Kopie.";
    JumpToLatest => "Jump to latest", "Zum Neuesten springen";
    ShowMore => "Show more", "Mehr zeigen";
    ShowLess => "Show less", "Weniger zeigen";
    Took => "took {0}", "dauerte {0}";
    RunningFor => "running for {0}", "läuft seit {0}";
    ViewFullOutput => "View full output", "Ganze Ausgabe ansehen";
    DownloadOutput => "Download output", "Ausgabe herunterladen";
    FullOutputOf => "Full output: {0}", "Ganze Ausgabe: {0}";
    FullOutputWindow => "Bytes {0}–{1} of {2}", "Bytes {0}–{1} von {2}";
    OutputStart => "Start", "Anfang";
    OutputEnd => "End", "Ende";
    LastLines => "Last lines:", "Letzte Zeilen:";
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
    MaybeNotReceived => "Your last action ({0}) may not have reached the app before it restarted: check, and take it again if needed.",
        "Deine letzte Aktion ({0}) hat die App vor dem Neustart vielleicht nicht erreicht: Prüfe sie und wiederhole sie bei Bedarf.";
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
    EnvWorker => "Worker sandbox (OPFS)", "Worker-Sandbox (OPFS)";
    EnvPickFolder => "A local folder…", "Ein lokaler Ordner …";
    EnvFolderUnsupported => "A local folder (this browser cannot open one)", "Ein lokaler Ordner (dieser Browser kann keinen öffnen)";
    EnvFolderNamed => "Local folder: {0}", "Lokaler Ordner: {0}";
    EnvironmentHint => "Where a session's files live. Choosing another environment starts a new session there; this session and its files stay as they are. Lifeline never deletes files in a folder you opened.", "Wo die Dateien einer Sitzung liegen. Eine andere Umgebung zu wählen startet dort eine neue Sitzung; diese Sitzung und ihre Dateien bleiben, wie sie sind. Lifeline löscht nie Dateien in einem Ordner, den du geöffnet hast.";
    EnvConfirmFolder => "Start a new session in the folder “{0}”? The agent can read, change and delete files in it. This session and its files stay as they are.", "Eine neue Sitzung im Ordner „{0}“ starten? Der Agent kann darin Dateien lesen, ändern und löschen. Diese Sitzung und ihre Dateien bleiben, wie sie sind.";
    EnvConfirmWorker => "Start a new session in this tab's worker sandbox? This session and its files stay as they are.", "Eine neue Sitzung in der Worker-Sandbox dieses Tabs starten? Diese Sitzung und ihre Dateien bleiben, wie sie sind.";
    EnvStartThere => "Start there", "Dort starten";
    EnvPickFailed => "The folder could not be opened: {0}", "Der Ordner konnte nicht geöffnet werden: {0}";
    EnvRememberFailed => "The folder could not be remembered, so nothing was started: {0}", "Der Ordner konnte nicht gespeichert werden, daher wurde nichts gestartet: {0}";
    EnvPermissionRefused => "Access to the folder “{0}” was not allowed, so nothing was started. Press the button again to be asked again.", "Der Zugriff auf den Ordner „{0}“ wurde nicht erlaubt, daher wurde nichts gestartet. Drücke die Schaltfläche erneut, um wieder gefragt zu werden.";
    EnvStateWorker => "Environment: this tab's worker sandbox.", "Umgebung: die Worker-Sandbox dieses Tabs.";
    EnvStateFolder => "Environment: your folder “{0}”.", "Umgebung: dein Ordner „{0}“.";
    TeardownRemovedOnDelete => "Lifeline owns its folder: Archive keeps it, Delete removes it.", "Der Ordner gehört Lifeline: Archivieren behält ihn, Löschen entfernt ihn.";
    TeardownNeverRemoved => "It is yours: Lifeline never deletes it.", "Er gehört dir: Lifeline löscht ihn nie.";
    ReopenReady => "A new runtime can open it again.", "Eine neue Runtime kann ihn wieder öffnen.";
    ReopenAfterPermission => "The browser will ask for your permission before it is opened again.", "Der Browser fragt dich um Erlaubnis, bevor er wieder geöffnet wird.";
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
    Tokens => "Tokens", "Tokens";
    TokensInOut => "{0} in · {1} out", "{0} ein · {1} aus";
    RoleLeader => "leader (this tab writes the journal)", "Leader (dieser Tab schreibt das Journal)";
    RoleFollower => "follower (read-only)", "Follower (nur lesen)";
    RoleDeciding => "deciding", "wird entschieden";
    RuntimeLine => "{0} (generation {1}), {2}", "{0} (Generation {1}), {2}";
    Attached => "attached", "verbunden";
    NotAttached => "not attached", "nicht verbunden";
    NotResponding => "not responding", "antwortet nicht";
    RuntimeNotResponding => "The runtime is not responding. It may be busy (a long `js` loop) or stuck; its command goes on if it recovers.",
        "Die Runtime antwortet nicht. Sie ist vielleicht beschäftigt (eine lange `js`-Schleife) oder hängt; ihr Befehl läuft weiter, falls sie sich erholt.";
    StopRuntime => "Stop runtime", "Runtime beenden";
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
    Unarchive => "Unarchive", "Zurückholen";
    ReissueOf => "You re-issued `{0}`.", "Sie haben `{0}` erneut ausgeführt.";
    ReissuedLater => "Re-issued below.", "Unten erneut ausgeführt.";
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
    DeleteSession => "Delete session", "Sitzung löschen";
    DeleteWhat => "Its messages, outputs and sandbox workspace files are removed for good. A folder you opened is never touched.",
        "Nachrichten, Ausgaben und Dateien im Sandbox-Arbeitsbereich werden endgültig entfernt. Ein Ordner, den du geöffnet hast, bleibt unberührt.";
    SessionStorage => "Session storage", "Speicher der Sitzung";
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
    LocalModel => "Local model (GGUF file)", "Lokales Modell (GGUF-Datei)";
    ModelFile => "Model file", "Modelldatei";
    Sampling => "Sampling", "Sampling";
    Temperature => "Temperature", "Temperatur";
    TopP => "Top-p", "Top-p";
    ReplyTokens => "Max reply tokens", "Max. Antwort-Token";
    ContextSize => "Context size (tokens)", "Kontextgröße (Token)";
    ChooseModelFile => "Choose a GGUF model file.", "Wähle eine GGUF-Modelldatei.";
    BaseUrl => "Base URL", "Basis-URL";
    Preset => "Preset", "Vorlage";
    CustomPreset => "Custom", "Eigene";
    CorsOllama => "Start Ollama with OLLAMA_ORIGINS={0} so it allows this page.", "Starte Ollama mit OLLAMA_ORIGINS={0}, damit es diese Seite zulässt.";
    CorsLmStudio => "Turn on “Enable CORS” in LM Studio's server settings so it allows this page.", "Schalte in den Servereinstellungen von LM Studio „Enable CORS“ ein, damit es diese Seite zulässt.";
    CorsLlamaCpp => "llama-server allows other origins by default; if it was started with --cors-origins, add {0}.", "llama-server lässt andere Ursprünge standardmäßig zu; wurde es mit --cors-origins gestartet, füge {0} hinzu.";
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
    ModelRequests => "Model requests", "Modellanfragen";
    ModelRequestsHint => "A request the server refused before working on it (429, 503, 529, no connection) is sent again after a wait, within these bounds. A reply silent for longer than the idle time ends as broken and is not sent again.",
        "Eine Anfrage, die der Server vor der Bearbeitung abgelehnt hat (429, 503, 529, keine Verbindung), wird nach einer Wartezeit in diesen Grenzen erneut gesendet. Eine Antwort, die länger als die Ruhezeit schweigt, endet als abgebrochen und wird nicht erneut gesendet.";
    MaxAttempts => "Attempts per request", "Versuche je Anfrage";
    RetrySeconds => "Retry for at most (seconds)", "Höchstens so lange wiederholen (Sekunden)";
    ConnectSeconds => "Wait for a response (seconds)", "Auf die Antwort warten (Sekunden)";
    IdleSeconds => "Idle time in a reply (seconds)", "Ruhezeit in einer Antwort (Sekunden)";
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
    EnterUpTo => "Enter a whole number from 1 to {0}.", "Gib eine ganze Zahl von 1 bis {0} ein.";
    NotVarName => "“{0}” is not a variable name: use letters, digits and _, not starting with a digit.",
        "„{0}“ ist kein Variablenname: Verwende Buchstaben, Ziffern und _, nicht mit einer Ziffer am Anfang.";
    ReservedVar => "{0} is set by the runtime and cannot be changed.",
        "{0} wird von der Runtime gesetzt und kann nicht geändert werden.";
    LineProblem => "Line {0}: {1}", "Zeile {0}: {1}";
    WriteNameValue => "write NAME=value.", "schreib NAME=Wert.";
    SetTwice => "{0} is set twice.", "{0} ist doppelt gesetzt.";
    ValueTooLong => "the value is longer than {0} bytes.", "der Wert ist länger als {0} Bytes.";
    AtMostVars => "At most {0} variables.", "Höchstens {0} Variablen.";
    // Phrases composed by the core and the controller (lifeline_core::phrase).
    // A provider failure in the transcript: the class's label and advice.
    ProviderAuth => "authentication failed", "Anmeldung fehlgeschlagen";
    ProviderRateLimit => "rate limited", "Anfragelimit erreicht";
    ProviderContextLength => "conversation too long", "Unterhaltung zu lang";
    ProviderTransport => "could not connect", "keine Verbindung";
    ProviderServer => "provider error", "Fehler beim Anbieter";
    ProviderInvalidRequest => "request refused", "Anfrage abgelehnt";
    ProviderNotFound => "model or endpoint not found", "Modell oder Endpunkt nicht gefunden";
    ProviderCut => "dropped mid-reply", "mitten in der Antwort abgebrochen";
    ProviderMalformed => "reply not understood", "Antwort nicht verstanden";
    ProviderCancelled => "cancelled", "abgebrochen";
    AdviceAuth => "Check the API key in the profile, then send the message again.",
        "Prüfe den API-Schlüssel im Profil und sende die Nachricht dann erneut.";
    AdviceRateLimit => "Wait a minute (or raise the provider account's limits), then send the message again.",
        "Warte eine Minute (oder erhöhe die Limits des Anbieterkontos) und sende die Nachricht dann erneut.";
    AdviceContextLength => "Start a new session, or choose a model with a larger context window, and send a shorter message.",
        "Beginne eine neue Sitzung oder wähle ein Modell mit größerem Kontextfenster und sende eine kürzere Nachricht.";
    AdviceTransport => "Either the server is down (or not at the profile's base URL), or it does not allow this page's origin (CORS); the browser cannot tell which. Check both, then send the message again.",
        "Entweder läuft der Server nicht (oder nicht unter der Basis-URL des Profils), oder er erlaubt den Ursprung dieser Seite nicht (CORS); der Browser kann das nicht unterscheiden. Prüfe beides und sende die Nachricht dann erneut.";
    AdviceServer => "The provider had a problem on its side; try again in a little while.",
        "Der Anbieter hatte ein Problem auf seiner Seite; versuche es in einer Weile erneut.";
    AdviceInvalidRequest => "The provider refused the request as sent; check the profile's model and settings, or start a new session.",
        "Der Anbieter hat die Anfrage so nicht angenommen; prüfe Modell und Einstellungen des Profils oder beginne eine neue Sitzung.";
    AdviceNotFound => "Check the model name and base URL in the profile.",
        "Prüfe den Modellnamen und die Basis-URL im Profil.";
    AdviceCut => "The connection dropped mid-reply; nothing was resent. Send the message again to ask anew.",
        "Die Verbindung brach mitten in der Antwort ab; nichts wurde erneut gesendet. Sende die Nachricht erneut, um neu zu fragen.";
    AdviceMalformed => "The provider sent something this app cannot read; check that the base URL points at a compatible API.",
        "Der Anbieter hat etwas gesendet, das diese App nicht lesen kann; prüfe, ob die Basis-URL auf eine kompatible API zeigt.";
    AdviceCancelled => "Send a new message when you are ready.", "Sende eine neue Nachricht, wenn du so weit bist.";
    RetryNow => "Retry now", "Jetzt erneut versuchen";
    ProviderOverloaded => "provider overloaded", "Anbieter überlastet";
    ProviderConnectTimeout => "no answer in time", "keine Antwort in der Zeit";
    ProviderIdleTimeout => "reply stalled", "Antwort ins Stocken geraten";
    ProviderNoFinish => "reply ended unfinished", "Antwort unvollendet beendet";
    AdviceOverloaded => "The provider is overloaded and kept refusing after the retries; try again in a few minutes.",
        "Der Anbieter ist überlastet und hat auch nach den Wiederholungen abgelehnt; versuche es in ein paar Minuten erneut.";
    AdviceConnectTimeout => "The provider did not answer in time; it may have received the message, so nothing was resent. Check the server, then send the message again.",
        "Der Anbieter hat nicht rechtzeitig geantwortet; er hat die Nachricht vielleicht erhalten, darum wurde nichts erneut gesendet. Prüfe den Server und sende die Nachricht dann erneut.";
    AdviceIdleTimeout => "The reply stopped arriving mid-way; nothing was resent. Send the message again to ask anew, or raise the profile's “Idle time in a reply” for a slow model.",
        "Die Antwort kam mittendrin nicht mehr an; nichts wurde erneut gesendet. Sende die Nachricht erneut, um neu zu fragen, oder erhöhe im Profil die „Ruhezeit in einer Antwort“ für ein langsames Modell.";
    AdviceNoFinish => "The provider ended the reply without saying it was finished; nothing was resent. Send the message again to ask anew.",
        "Der Anbieter hat die Antwort beendet, ohne zu sagen, dass sie fertig ist; nichts wurde erneut gesendet. Sende die Nachricht erneut, um neu zu fragen.";
    // Failure causes.
    // Refusals.
    // Journal faults.
    // Controller notices.
    // Turns the core ended (`TurnEnding`).
    // The composer, notices and layout (issue 13).
    HintSends => "Enter sends · Shift+Enter adds a line", "Enter sendet · Umschalt+Enter fügt eine Zeile ein";
    HintQueues => "Enter queues it after the running turn · Shift+Enter adds a line",
        "Enter reiht sie nach dem laufenden Durchgang ein · Umschalt+Enter fügt eine Zeile ein";
    QueuedMessages => "Queued messages", "Wartende Nachrichten";
    Queued => "queued", "wartet";
    CloseDetails => "Close details", "Details schließen";
    TechnicalDetails => "Technical details", "Technische Details";
    // Code fetched when first needed (`wasm-split`).
    NotLoaded => "This part of the page could not be loaded. Check the connection, then try again.",
        "Dieser Teil der Seite konnte nicht geladen werden. Prüfe die Verbindung und versuche es dann erneut.";
    TryAgain => "Try again", "Erneut versuchen";
}
