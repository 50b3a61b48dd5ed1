//! The phrases' catalog: every text the controller words, in English and
//! German, side by side. A key without a text in either locale does not
//! compile. English is the UI contract (the texts DESIGN.md names).
//!
//! The outcome and action labels are also in the page's catalog: the page
//! shows them as labels, and phrases name them inside a sentence.
//!
//! The controller's wasm carries only the English column, as the page's
//! does: the German one is a bundle asset (`i18n/words-de.json`, written by
//! `cargo xtask build` from this file) that the controller fetches when a
//! reader asks for German ([`crate::german`]). Native builds, the tests and
//! xtask, keep it inline.

use crate::Locale;

macro_rules! catalog {
    ($($key:ident => $en:literal, $de:literal;)*) => {
        /// A phrase text's key; each has a text in every locale.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Msg { $($key,)* }

        impl Msg {
            pub const ALL: &'static [Msg] = &[$(Msg::$key,)*];

            /// How many keys there are: the German asset has one text each.
            pub const COUNT: usize = [$(stringify!($key),)*].len();

            /// The keys' names in order: a German asset written for another
            /// key list would put texts under the wrong keys.
            pub const FINGERPRINT: u32 = crate::fnv1a(concat!($(stringify!($key), ",",)*).as_bytes());
        }

        /// The text of `msg` in `locale`. `{0}`, `{1}` are parameters for
        /// [`crate::fill`].
        pub fn t(locale: Locale, msg: Msg) -> &'static str {
            let en = match msg { $(Msg::$key => $en,)* };
            match locale {
                Locale::En => en,
                #[cfg(any(test, not(target_arch = "wasm32")))]
                Locale::De => match msg { $(Msg::$key => $de,)* },
                // Until the asset has arrived phrases stay in English.
                #[cfg(not(any(test, not(target_arch = "wasm32"))))]
                Locale::De => crate::german::text(msg as usize).unwrap_or(en),
            }
        }
    };
}

catalog! {
    // Labels a phrase names inside a sentence (copies of the page's).
    OutcomeAdmitted => "admitted", "angenommen";
    OutcomeNotDispatched => "not dispatched", "nicht übergeben";
    OutcomeDispatched => "dispatched", "übergeben";
    OutcomeMayHaveStarted => "may have started", "vielleicht gestartet";
    OutcomeRunning => "running", "läuft";
    TurnCompleted => "completed", "abgeschlossen";
    TurnFailed => "failed", "fehlgeschlagen";
    TurnCancelled => "cancelled", "abgebrochen";
    OutcomeTimedOut => "timed out", "Zeit überschritten";
    OutcomeLost => "lost", "verloren";
    Resume => "Resume", "Wiederaufnehmen";
    ContinueFromHistory => "Continue from history", "Aus dem Verlauf fortsetzen";
    StartFresh => "Start fresh", "Neu beginnen";
    InspectWorkspace => "Inspect workspace", "Arbeitsbereich ansehen";
    Archive => "Archive", "Archivieren";
    Unarchive => "Unarchive", "Zurückholen";
    Recovery => "Recovery", "Wiederherstellung";
    NotPossibleNow => "{0} is not possible now: {1}", "{0} ist jetzt nicht möglich: {1}";
    // The phrases.
    PhSummaryAgentFailed => "The last turn failed. The workspace and keys are kept.", "Der letzte Durchgang ist fehlgeschlagen. Arbeitsbereich und Schlüssel bleiben erhalten.";
    PhSummaryRuntimeLost => "The runtime stopped. The workspace is kept.", "Die Runtime wurde beendet. Der Arbeitsbereich bleibt erhalten.";
    PhSummaryCleanupFailed => "Stopping did not finish.", "Das Anhalten wurde nicht abgeschlossen.";
    PhSummaryCredential => "A key this session needs is missing.", "Ein Schlüssel, den diese Sitzung braucht, fehlt.";
    PhSummaryProfile => "The session's profile cannot be used.", "Das Profil der Sitzung kann nicht verwendet werden.";
    PhSummaryRecoveryFailed => "Recovery failed.", "Die Wiederherstellung ist fehlgeschlagen.";
    PhSummaryLaunchFailed => "The session's runtime did not start.", "Die Runtime der Sitzung ist nicht gestartet.";
    PhSummaryUnknownFailure => "Something stopped this session.", "Etwas hat diese Sitzung angehalten.";
    PhSummaryDetached => "The session stopped when the page or its worker did. Its history and workspace are kept.", "Die Sitzung endete mit der Seite oder ihrem Worker. Verlauf und Arbeitsbereich bleiben erhalten.";
    PhSummaryCancelled => "The start was cancelled.", "Der Start wurde abgebrochen.";
    PhSummaryArchived => "This session is archived: Unarchive it, or Start fresh.", "Diese Sitzung ist archiviert: zurückholen oder neu beginnen.";
    PhSummaryUncertain => "Some actions may or may not have happened. Nothing was repeated.", "Einige Aktionen sind vielleicht geschehen, vielleicht nicht. Nichts wurde wiederholt.";
    PhSummaryInterruptedEarlier => "Something stopped this session earlier; details are in its history.", "Etwas hat diese Sitzung früher angehalten; Einzelheiten stehen in ihrem Verlauf.";
    PhBusyStarting => "Recovering: starting the session…", "Wiederherstellung: Die Sitzung startet…";
    PhBusyCancelling => "Stopping the start…", "Der Start wird angehalten…";
    PhWaitOrStop => "{0} Wait for it, or press Stop.", "{0} Warte darauf oder drücke Stopp.";
    PhSessionArchived => "the session is archived; Unarchive it first", "die Sitzung ist archiviert; erst zurückholen";
    PhSessionDeleted => "the session was deleted; start a new one", "die Sitzung wurde gelöscht; beginnen Sie eine neue";
    PhNeverRan => "this session has never run, so there is nothing to resume; send a message", "diese Sitzung lief noch nie, es gibt also nichts fortzusetzen; sende eine Nachricht";
    PhSessionRunning => "the session is running", "die Sitzung läuft";
    PhWorkspaceGoneStartFresh => "the workspace is gone; Start fresh instead", "der Arbeitsbereich ist weg; starte stattdessen neu";
    PhNoHistory => "there is no recorded history to continue from", "es gibt keinen aufgezeichneten Verlauf, an den angeknüpft werden kann";
    PhAgentWorking => "the agent is working on a message", "der Agent arbeitet an einer Nachricht";
    PhAgentRunningLive => "the agent is running; its workspace is live, not stopped", "der Agent läuft; sein Arbeitsbereich ist aktiv, nicht angehalten";
    PhNoWorkspaceFolder => "there is no workspace folder to inspect", "es gibt keinen Arbeitsbereich-Ordner zum Ansehen";
    PhAgentWorkingStopFirst => "the agent is working on a message; stop it first", "der Agent arbeitet an einer Nachricht; halte ihn zuerst an";
    PhFolderGone => "the folder “{0}” is no longer available in this browser; choose a folder under Environment", "der Ordner „{0}“ ist in diesem Browser nicht mehr verfügbar; wähle unter Umgebung einen Ordner";
    PhNotOffered => "the session does not offer it now", "die Sitzung bietet das jetzt nicht an";
    PhObservedControllerRestart => "the controller restarted; this command's state comes from the journal", "der Controller wurde neu gestartet; der Zustand dieses Befehls stammt aus dem Journal";
    PhObservedHostLoss => "the page was reloaded or closed while this ran; its runtime ended with it", "die Seite wurde neu geladen oder geschlossen, während er lief; seine Runtime endete mit ihr";
    PhObservedTransportLoss => "the connection to its runtime was lost; unless it was acknowledged, it may have started", "die Verbindung zu seiner Runtime ging verloren; wenn er nicht bestätigt war, hat er vielleicht begonnen";
    PhObservedRuntimeCrash => "its runtime crashed", "seine Runtime ist abgestürzt";
    PhObservedCheckpointFailure => "a journal write failed and is being retried unchanged; nothing in it was shown as done", "ein Schreibvorgang ins Journal schlug fehl und wird unverändert wiederholt; nichts darin wurde als erledigt gezeigt";
    PhObservedCleanupFailure => "stopping its runtime failed; it may still be running", "das Beenden seiner Runtime schlug fehl; er läuft vielleicht noch";
    PhObservedAckTimeout => "its runtime did not acknowledge it in time; it may have started and is not sent again", "seine Runtime hat ihn nicht rechtzeitig bestätigt; er hat vielleicht begonnen und wird nicht erneut gesendet";
    PhObservedCancelEscalation => "cancelling it did not finish in time, so its runtime was terminated", "sein Abbruch wurde nicht rechtzeitig fertig, daher wurde seine Runtime beendet";
    PhObservedReattachTimeout => "its runtime did not reconnect in time; it is being terminated", "seine Runtime hat sich nicht rechtzeitig wieder verbunden; sie wird beendet";
    PhObservedRuntimeReplaced => "its runtime was replaced by a new one", "seine Runtime wurde durch eine neue ersetzt";
    PhObservedSessionStopped => "its session was stopped", "seine Sitzung wurde beendet";
    PhObservedStreamConflict => "its runtime sent a different version of a recorded event; the recorded one was kept", "seine Runtime schickte eine andere Fassung eines aufgezeichneten Ereignisses; das aufgezeichnete bleibt";
    FrStopped => "stopped by the user", "vom Benutzer angehalten";
    FrStoppedWaitingToRetry => "stopped by the user while waiting to retry", "vom Benutzer angehalten, während die Wiederholung wartete";
    FrStoppedBeforeSent => "stopped by the user before it was sent", "vom Benutzer angehalten, bevor sie gesendet wurde";
    FrStoppedWhileLoading => "stopped by the user while the local model was loading; nothing was generated", "vom Benutzer angehalten, während das lokale Modell lud; nichts wurde erzeugt";
    FrNoProvider => "this execution has no model provider; resume the session", "diese Ausführung hat keinen Modellanbieter; setze die Sitzung fort";
    FrNoResponseWithin => "no response arrived within {0} s", "innerhalb von {0} s kam keine Antwort";
    FrNoByteFor => "no byte of the reply arrived for {0} s", "{0} s lang kam kein Byte der Antwort";
    FrLoadStalled => "the local model stopped loading: no progress for {0} s, at {1} of {2} bytes; nothing was generated", "das lokale Modell lädt nicht weiter: {0} s kein Fortschritt, bei {1} von {2} Bytes; nichts wurde erzeugt";
    FrRequestFailed => "the request failed before any response arrived", "die Anfrage ist fehlgeschlagen, bevor eine Antwort kam";
    FrReplyStopped => "the reply stopped arriving", "die Antwort kam nicht weiter an";
    FrNotGguf => "the model file is not a GGUF model: {0}", "die Modelldatei ist kein GGUF-Modell: {0}";
    FrUnsupportedArchitecture => "llama.cpp does not support this model's architecture: {0}", "llama.cpp unterstützt die Architektur dieses Modells nicht: {0}";
    FrContextTooLong => "the conversation does not fit the model's context: {0}", "das Gespräch passt nicht in den Kontext des Modells: {0}";
    FrOutOfMemory => "the browser ran out of memory for the model: {0}", "dem Browser ging der Speicher für das Modell aus: {0}";
    FrLocalFailed => "{0}: the local model failed", "{0}: das lokale Modell ist fehlgeschlagen";
    FrInvalidUtf8 => "the model produced bytes that are not UTF-8 text; the reply is broken", "das Modell hat Bytes erzeugt, die kein UTF-8-Text sind; die Antwort ist kaputt";
    FrNoBody => "the provider answered without a body", "der Anbieter hat ohne Inhalt geantwortet";
    FrUnfinished => "the reply stream ended without the provider's finish reason", "der Antwortstrom endete ohne den Abschlussgrund des Anbieters";
    FrMalformed => "the reply stream was malformed: {0}", "der Antwortstrom war fehlerhaft: {0}";
    FrTooLarge => "the reply was too large ({0})", "die Antwort war zu groß ({0})";
    FrBuiltIn => "the built-in agent sends no requests", "der eingebaute Agent sendet keine Anfragen";
    FrLocalSettingsUnreadable => "the local model's settings are unreadable", "die Einstellungen des lokalen Modells sind unlesbar";
    FrNoAbortController => "the browser refused to make an abort controller; nothing was sent", "der Browser hat keinen Abbruch-Controller erzeugt; nichts wurde gesendet";
    FrNoHeaders => "the browser refused to build the request headers", "der Browser hat die Header der Anfrage nicht erzeugt";
    FrHeaderRefused => "the request header {0} has characters a browser cannot send", "der Header {0} der Anfrage enthält Zeichen, die ein Browser nicht senden kann";
    FrInvalidBaseUrl => "the profile's base URL “{0}” is not an http:// or https:// URL", "die Basis-URL „{0}“ des Profils ist keine URL mit http:// oder https://";
    FrNoModel => "the profile names no model", "das Profil nennt kein Modell";
    FrZeroMaxTokens => "the profile's max tokens is zero", "die maximale Tokenzahl des Profils ist null";
    FrKeyUnsendable => "the API key contains characters an HTTP header cannot carry (spaces, line breaks or non-ASCII); paste it again", "der API-Schlüssel enthält Zeichen, die ein HTTP-Header nicht tragen kann (Leerzeichen, Zeilenumbrüche oder Nicht-ASCII); füge ihn erneut ein";
    FrWorkerEnded => "the worker calling the model stopped", "der Worker, der das Modell aufruft, hat angehalten";
    EndWorkerEnded => "its worker ended", "ihr Worker hat geendet";
    EndRetired => "the journal retired it", "das Journal hat sie ausgemustert";
    EndGone => "the journal records it gone", "laut Journal ist sie weg";
    EndUnknownToJournal => "the journal does not know it", "das Journal kennt sie nicht";
    PhFoldersUnsupported => "this browser cannot open local folders; open Lifeline in a browser that can", "dieser Browser kann keine lokalen Ordner öffnen; öffne Lifeline in einem Browser, der das kann";
    PhAnotherTabInControl => "another tab is in control; act there, or close that tab and this one takes over", "ein anderer Tab hat die Kontrolle; handle dort, oder schließe jenen Tab, dann übernimmt dieser";
    PhFolderNeedsPermissionToRead => "the browser needs your permission to read the folder “{0}”; press Inspect workspace again and allow it", "der Browser braucht deine Erlaubnis, um den Ordner „{0}“ zu lesen; drücke erneut auf Arbeitsbereich ansehen und erlaube es";
    PhEnvironmentWhileWorking => "the agent is working on a message; choose the environment when it is done, or press Stop", "der Agent arbeitet an einer Nachricht; wähle die Umgebung, wenn er fertig ist, oder drücke Stopp";
    PhSwitchWhileWorking => "this session is starting its runtime; open another once it is up, or press Stop", "diese Sitzung startet gerade ihre Laufzeit; öffne eine andere, sobald sie läuft, oder drücke Stopp";
    PhRuntimeAnswers => "the runtime answers again, so it was not stopped", "die Runtime antwortet wieder und wurde daher nicht beendet";
    PhStopRuntimeRefused => "the runtime was not stopped: it is no longer the one this session runs ({0})", "die Runtime wurde nicht beendet: sie ist nicht mehr die dieser Sitzung ({0})";
    PhRunningLimit => "3 sessions are working, the most that run at once; open another when one of them is done, or stop one", "3 Sitzungen arbeiten, mehr laufen nicht gleichzeitig; öffne eine andere, wenn eine davon fertig ist, oder stoppe eine";
    PhRetryRateLimited => "rate limited — retrying in {0} s", "Anfragelimit erreicht — neuer Versuch in {0} s";
    PhRetryOverloaded => "the provider is overloaded — retrying in {0} s", "der Anbieter ist überlastet — neuer Versuch in {0} s";
    PhRetryNotConnected => "could not connect — retrying in {0} s", "keine Verbindung — neuer Versuch in {0} s";
    PhLocalModelRefused => "this file cannot be used as a local model: {0}", "diese Datei kann nicht als lokales Modell dienen: {0}";
    PhModelNotGguf => "it is not a GGUF model", "sie ist kein GGUF-Modell";
    PhModelVersion => "GGUF version {0} is not supported (2 and 3 are)", "GGUF-Version {0} wird nicht unterstützt (2 und 3 schon)";
    PhModelTruncated => "it ends inside its GGUF header", "sie endet mitten in ihrem GGUF-Kopf";
    PhModelDamaged => "its GGUF header is damaged", "ihr GGUF-Kopf ist beschädigt";
    PhModelNoArchitecture => "its GGUF header names no model architecture", "ihr GGUF-Kopf nennt keine Modellarchitektur";
    PhModelUnreadable => "the browser could not read or keep it ({0})", "der Browser konnte sie nicht lesen oder ablegen ({0})";
    PhLocalModelFacts => "{0}: {1} bytes, {2}, {3} parameters, trained context {4} tokens; loaded with a context of {5} tokens", "{0}: {1} Bytes, {2}, {3} Parameter, trainierter Kontext {4} Token; geladen mit einem Kontext von {5} Token";
    PhLocalModelLoading => "loading the local model: {0} of {1} bytes, {2} s", "lokales Modell wird geladen: {0} von {1} Bytes, {2} s";
    PhFolderNeedsPermissionLaunch => "the browser needs your permission again to use the folder “{0}”; press Resume and allow it", "der Browser braucht erneut deine Erlaubnis, um den Ordner „{0}“ zu verwenden; drücke Fortsetzen und erlaube es";
    PhFolderGoneLaunch => "the folder “{0}” is no longer available in this browser (moved, deleted or forgotten); Start fresh, or choose it again under Environment", "der Ordner „{0}“ ist in diesem Browser nicht mehr verfügbar (verschoben, gelöscht oder vergessen); beginne neu oder wähle ihn unter Umgebung erneut";
    PhOutputUnavailable => "the full output of that command cannot be read here; export the session's evidence to get it", "die vollständige Ausgabe dieses Befehls kann hier nicht gelesen werden; exportiere die Belege der Sitzung, um sie zu erhalten";
    PhEventsUnreadable => "some of this command's records could not be read back from the journal: its output and exit status are not shown (the notices say which records)", "einige Einträge dieses Befehls konnten nicht aus dem Journal gelesen werden: Ausgabe und Exit-Status werden nicht gezeigt (die Hinweise nennen die Einträge)";
    PhDispatchRefusedRoom => "its runtime had no room for another command, so it has not started; it is offered again when there is room", "seine Runtime hatte keinen Platz für einen weiteren Befehl, daher hat er nicht begonnen; er wird erneut angeboten, sobald Platz ist";
    PhDispatchRefusedReplaced => "the runtime it was sent to had been replaced and refused it, so it has not started there", "die Runtime, an die er ging, war ersetzt worden und hat ihn abgelehnt, daher hat er dort nicht begonnen";
    PhDispatchRefusedCancelled => "its cancellation reached the runtime first, so it never started", "sein Abbruch erreichte die Runtime zuerst, daher hat er nie begonnen";
    PhOutputMissing => "the full output cannot be shown: {0} of its stored parts are missing from storage", "die vollständige Ausgabe kann nicht gezeigt werden: {0} ihrer gespeicherten Teile fehlen im Speicher";
    PhNoMessagesYet => "no messages yet", "noch keine Nachrichten";
    PhTurnsRepliesLost => "turns recorded: {0}; model replies lost while streaming: {1} — never resent", "aufgezeichnete Durchgänge: {0}; beim Streamen verlorene Modellantworten: {1} — nie erneut gesendet";
    PhTurnsSomeUnreadable => "{0} turns recorded; some records unreadable", "{0} Durchgänge aufgezeichnet; einige Einträge sind unlesbar";
    PhTurnsSomeUnreadableOne => "{0} turn recorded; some records unreadable", "{0} Durchgang aufgezeichnet; einige Einträge sind unlesbar";
    PhTurnsRecorded => "{0} turns recorded in the journal", "{0} Durchgänge im Journal aufgezeichnet";
    PhTurnsRecordedOne => "{0} turn recorded in the journal", "{0} Durchgang im Journal aufgezeichnet";
    PhWorkspaceThere => "the workspace folder is there", "der Arbeitsbereich-Ordner ist vorhanden";
    PhWorkspaceThereEntries => "the workspace folder is there ({0} entries)", "der Arbeitsbereich-Ordner ist vorhanden ({0} Einträge)";
    PhWorkspaceThereEntriesOne => "the workspace folder is there ({0} entry)", "der Arbeitsbereich-Ordner ist vorhanden ({0} Eintrag)";
    PhWorkspaceGone => "the workspace folder is gone from this browser's storage", "der Arbeitsbereich-Ordner fehlt im Speicher dieses Browsers";
    PhNoWorkspaceYet => "nothing has run yet, so there is no workspace folder", "noch lief nichts, daher gibt es keinen Arbeitsbereich-Ordner";
    PhNotChecked => "not checked", "nicht geprüft";
    PhNoStoredKey => "the profile uses no stored key", "das Profil verwendet keinen gespeicherten Schlüssel";
    PhKeysPresent => "{0} stored keys present, encrypted", "{0} gespeicherte Schlüssel vorhanden, verschlüsselt";
    PhKeysPresentOne => "{0} stored key present, encrypted", "{0} gespeicherter Schlüssel vorhanden, verschlüsselt";
    PhKeysMissing => "stored keys missing: {0} of {1}", "fehlende gespeicherte Schlüssel: {0} von {1}";
    PhNoRuntimeRan => "no runtime has run for this session", "für diese Sitzung lief noch keine Runtime";
    PhRuntimeAttached => "the runtime is attached", "die Runtime ist verbunden";
    PhCommandMayHaveStarted => "a command may have started before its runtime stopped", "ein Befehl wurde vielleicht gestartet, bevor seine Runtime beendet wurde";
    PhRuntimeStopped => "the runtime that ran this session stopped", "die Runtime, die diese Sitzung ausführte, wurde beendet";
    PhTabAttached => "this tab is attached to the journal", "dieser Tab ist mit dem Journal verbunden";
    PhTabNotAttached => "this tab is not attached to the journal", "dieser Tab ist nicht mit dem Journal verbunden";
    PhOutputEvicted => "older output events of {0} commands are not kept in detail (their collapsed output is)", "ältere Ausgabeereignisse von {0} Befehlen sind nicht im Einzelnen erhalten (ihre zusammengefasste Ausgabe schon)";
    PhOutputEvictedOne => "older output events of {0} command are not kept in detail (its collapsed output is)", "ältere Ausgabeereignisse von {0} Befehl sind nicht im Einzelnen erhalten (seine zusammengefasste Ausgabe schon)";
    PhRecordsSetAside => "{0} journal records could not be read and were set aside", "{0} Journaleinträge waren unlesbar und wurden beiseitegelegt";
    PhRecordsSetAsideOne => "{0} journal record could not be read and was set aside", "{0} Journaleintrag war unlesbar und wurde beiseitegelegt";
    PhOutputNeverRecorded => "output after the last recorded event of {0} lost commands was never recorded", "Ausgabe nach dem letzten aufgezeichneten Ereignis von {0} verlorenen Befehlen wurde nie aufgezeichnet";
    PhOutputNeverRecordedOne => "output after the last recorded event of {0} lost command was never recorded", "Ausgabe nach dem letzten aufgezeichneten Ereignis von {0} verlorenen Befehl wurde nie aufgezeichnet";
    PhStoragePersistent => "persistent storage; {0} of {1} used", "dauerhafter Speicher; {0} von {1} belegt";
    PhStorageBestEffort => "best-effort storage (the browser may clear it under pressure); {0} of {1} used", "nicht dauerhafter Speicher (der Browser kann ihn bei Knappheit löschen); {0} von {1} belegt";
    PhErrorStamp => "Error stamp {0}", "Fehlerstempel {0}";
    PhExecution => "Execution {0}", "Ausführung {0}";
    PhUncertainMarkedDone => "`{0}` {1} — you marked it done", "`{0}` {1} — von dir als erledigt markiert";
    PhUncertainMarkedNotDone => "`{0}` {1} — you marked it not done", "`{0}` {1} — von dir als nicht erledigt markiert";
    PhUncertainReissued => "`{0}` {1} — re-issued", "`{0}` {1} — erneut ausgeführt";
    PhUncertainCheck => "`{0}` {1} — check before repeating it", "`{0}` {1} — prüfe das, bevor du ihn wiederholst";
    PhReplyLost => "The model's reply to request {0} (turn {1}) was lost; it was not resent", "Die Antwort des Modells auf Anfrage {0} (Durchgang {1}) ging verloren; sie wurde nicht erneut angefordert";
    PhStorageDetail => "Storage: {0}", "Speicher: {0}";
    PhEarlierFailure => "{0} (stamp {1})", "{0} (Stempel {1})";
    PhProfileUnreadable => "the profile recorded for this session could not be read ({0}); open Profiles to repair or delete it, then resume", "das für diese Sitzung aufgezeichnete Profil ist unlesbar ({0}); öffne Profile, um es zu reparieren oder zu löschen, und setze dann fort";
    PhProfileOtherOwner => "the profile recorded for this session belongs to \"{0}\"; it is not used here. Delete it in Profiles to resume without it", "das für diese Sitzung aufgezeichnete Profil gehört „{0}“; es wird hier nicht verwendet. Lösche es in Profile, um ohne es fortzusetzen";
    PhProfileDeleted => "the selected profile was deleted; choose another profile for this session", "das gewählte Profil wurde gelöscht; wähle ein anderes Profil für diese Sitzung";
    PhCredentialMissing => "credential {0} that this session needs is missing; add the key again in Profiles, then resume", "der Schlüssel {0}, den diese Sitzung braucht, fehlt; füge ihn in Profile erneut hinzu und setze dann fort";
    PhCredMissingReason => "it is missing", "er fehlt";
    PhCredMalformed => "the stored credential record is malformed ({0})", "der gespeicherte Schlüsseleintrag ist fehlerhaft ({0})";
    PhCredKeyGone => "the encryption key is gone", "der Verschlüsselungsschlüssel ist nicht mehr da";
    PhCredKeyDamaged => "the encryption key record is damaged", "der Eintrag des Verschlüsselungsschlüssels ist beschädigt";
    PhCredNoCrypto => "the browser's WebCrypto is not available ({0}); the credential cannot be decrypted here", "WebCrypto ist in diesem Browser nicht verfügbar ({0}); der Schlüssel kann hier nicht entschlüsselt werden";
    PhCredUndecryptable => "the stored credential could not be decrypted: it was encrypted under an earlier key, or the record was altered", "der gespeicherte Schlüssel konnte nicht entschlüsselt werden: er wurde mit einem früheren Schlüssel verschlüsselt, oder der Eintrag wurde verändert";
    PhCredNotText => "the decrypted credential is not text", "der entschlüsselte Schlüssel ist kein Text";
    PhCredentialUnreadable => "credential {0} could not be read ({1}); enter the key again in Profiles, then resume", "der Schlüssel {0} ist unlesbar ({1}); gib ihn in Profile erneut ein und setze dann fort";
    PhWorkspaceMissingLaunch => "the session's workspace is gone from this browser's storage; it was not recreated. Start fresh to continue in a new workspace", "der Arbeitsbereich der Sitzung fehlt im Speicher dieses Browsers; er wurde nicht neu angelegt. Starte neu, um in einem neuen Arbeitsbereich weiterzumachen";
    PhLaunchFailed => "the runtime could not start: {0}", "die Runtime konnte nicht starten: {0}";
    PhLaunchRefused => "the runtime could not start: the journal refused it ({0}); Resume tries again", "die Runtime konnte nicht starten: das Journal hat es abgelehnt ({0}); Wiederaufnehmen versucht es erneut";
    PhResumeFailed => "resume failed: {0}", "das Fortsetzen ist fehlgeschlagen: {0}";
    PhLoadUnsupported => "the execution cannot be rejoined", "die Ausführung kann nicht wieder aufgenommen werden";
    PhLoadCapabilityAbsent => "the runtime cannot be reattached", "die Runtime kann nicht wieder verbunden werden";
    PhLoadUnknownSession => "the runtime of this session is gone", "die Runtime dieser Sitzung ist weg";
    PhLoadTimeout => "the runtime did not answer in time", "die Runtime hat nicht rechtzeitig geantwortet";
    PhLoadCancelled => "the resume was cancelled", "das Fortsetzen wurde abgebrochen";
    PhLoadAuth => "the runtime refused the session's identity", "die Runtime hat die Identität der Sitzung abgelehnt";
    PhLoadTransport => "the runtime could not be reached: {0}", "die Runtime war nicht erreichbar: {0}";
    PhLoadUnclassified => "rejoining failed: {0}", "das Wiederverbinden ist fehlgeschlagen: {0}";
    PhCleanupFailed => "stopping did not finish: {0}; the session's workspace is kept. Reload the page to stop the runtime", "das Anhalten wurde nicht abgeschlossen: {0}; der Arbeitsbereich der Sitzung bleibt erhalten. Lade die Seite neu, um die Runtime zu beenden";
    PhAgentFailed => "the turn failed: {0}", "der Durchgang ist fehlgeschlagen: {0}";
    PhRuntimeLost => "the runtime worker stopped ({0}); the workspace is kept. Resume to continue in a new runtime", "der Runtime-Worker wurde beendet ({0}); der Arbeitsbereich bleibt erhalten. Setze fort, um in einer neuen Runtime weiterzumachen";
    PhNoSuchSession => "there is no such session", "diese Sitzung gibt es nicht";
    PhAlreadyStarting => "the session is already starting", "die Sitzung startet bereits";
    PhCancellationPending => "the previous start is still being cancelled; try again when it has stopped", "der vorige Start wird noch abgebrochen; versuche es erneut, wenn er angehalten ist";
    PhNothingToResume => "the session has nothing to resume; send a message to start it", "die Sitzung hat nichts fortzusetzen; sende eine Nachricht, um sie zu starten";
    PhQueueFull => "at most {0} messages can wait", "höchstens {0} Nachrichten können warten";
    PhAlreadyRunning => "the session is already running", "die Sitzung läuft bereits";
    PhTurnRunning => "the agent is working on a message; the new profile applies once you stop it or it ends", "der Agent arbeitet an einer Nachricht; das neue Profil gilt, sobald du ihn anhältst oder er fertig ist";
    PhJournalUnavailable => "the journal could not be opened or was closed by the browser ({0}); history cannot be kept in this browser profile until it is available again — reload to retry", "das Journal konnte nicht geöffnet werden oder wurde vom Browser geschlossen ({0}); bis es wieder verfügbar ist, kann in diesem Browserprofil kein Verlauf gespeichert werden — lade neu, um es erneut zu versuchen";
    PhJournalNewerSchema => "the journal was written by a newer Lifeline (schema above {0}); reload to get the newer version — nothing was changed", "das Journal wurde von einem neueren Lifeline geschrieben (Schema über {0}); lade neu, um die neuere Version zu bekommen — nichts wurde geändert";
    PhJournalBlocked => "another Lifeline tab is holding an older journal open; close or reload the other tabs", "ein anderer Lifeline-Tab hält ein älteres Journal offen; schließe die anderen Tabs oder lade sie neu";
    PhJournalOperation => "journal operation failed: {0}; nothing of it was written — it can be retried", "Journal-Vorgang fehlgeschlagen: {0}; davon wurde nichts geschrieben — er kann wiederholt werden";
    PhJournalQuota => "the browser's storage for Lifeline is full: the journal is intact and everything already recorded is kept, but new work is refused until space is freed (delete old sessions or artifacts, or free disk space)", "der Browserspeicher für Lifeline ist voll: Das Journal ist intakt und alles Aufgezeichnete bleibt erhalten, aber neue Arbeit wird abgelehnt, bis Platz frei ist (lösche alte Sitzungen oder Artefakte oder schaffe Speicherplatz)";
    PhJournalSuperseded => "another Lifeline controller (another tab or a restarted worker) took over the journal; this one wrote nothing and must stop writing — reload this tab to follow it", "ein anderer Lifeline-Controller (ein anderer Tab oder ein neu gestarteter Worker) hat das Journal übernommen; dieser hat nichts geschrieben und darf nicht mehr schreiben — lade diesen Tab neu, um ihm zu folgen";
    PhJournalVersionChange => "a newer Lifeline in another tab is upgrading the journal, so this tab closed its connection; reload this tab to continue", "ein neueres Lifeline in einem anderen Tab aktualisiert das Journal, daher hat dieser Tab seine Verbindung geschlossen; lade diesen Tab neu, um weiterzumachen";
    PhJournalCorrupt => "the journal is damaged: {0}; records already written are kept — export the evidence and start a fresh profile if this persists", "das Journal ist beschädigt: {0}; bereits geschriebene Einträge bleiben erhalten — exportiere die Nachweise und beginne mit einem frischen Profil, falls das anhält";
    PhJournalInvalid => "refused to write an invalid record ({0}); this is a bug in Lifeline — nothing was written", "ein ungültiger Eintrag wurde nicht geschrieben ({0}); das ist ein Fehler in Lifeline — nichts wurde geschrieben";
    PhJournalClosed => "the journal connection was closed by this tab", "die Journal-Verbindung wurde von diesem Tab geschlossen";
    PhJournalNotRecovered => "the journal could not be recovered: its entry at position {0} contradicts what comes before it", "das Journal konnte nicht wiederhergestellt werden: sein Eintrag an Position {0} widerspricht dem, was davor steht";
    PhJournalRemoved => "the stored history is gone: the site's data was cleared or the journal was deleted while Lifeline was open. Unrecorded messages stay in the message box. Start a new journal to go on", "der gespeicherte Verlauf ist weg: Die Websitedaten wurden gelöscht oder das Journal wurde gelöscht, während Lifeline offen war. Nicht aufgezeichnete Nachrichten bleiben im Nachrichtenfeld. Beginne ein neues Journal, um weiterzumachen";
    PhJournalConnectionLost => "the browser closed the journal (site data cleared, or a disk error), so the stored history cannot be reached. Unrecorded messages stay in the message box. Start a new journal to go on; the history loads again if it is still there", "der Browser hat das Journal geschlossen (Websitedaten gelöscht oder ein Datenträgerfehler), daher ist der gespeicherte Verlauf nicht erreichbar. Nicht aufgezeichnete Nachrichten bleiben im Nachrichtenfeld. Beginne ein neues Journal, um weiterzumachen; der Verlauf wird wieder geladen, falls er noch da ist";
    PhJournalWriterUnreadable => "the journal's writer record is unreadable, so nothing can be written safely. The history is shown read-only and nothing was deleted: export the evidence, then choose Repair journal (the damaged record is kept)", "der Schreiber-Eintrag des Journals ist unlesbar, daher kann nichts sicher geschrieben werden. Der Verlauf wird nur lesend gezeigt und nichts wurde gelöscht: Exportiere die Nachweise und wähle dann „Journal reparieren“ (der beschädigte Eintrag bleibt erhalten)";
    PhNothingToRecover => "there is nothing to recover", "es gibt nichts wiederherzustellen";
    PhWorkspaceCannotOpen => "the workspace cannot be opened: the session is gone or archived", "der Arbeitsbereich kann nicht geöffnet werden: Die Sitzung ist weg oder archiviert";
    PhWorkspaceUnreadable => "the workspace cannot be read: {0}", "der Arbeitsbereich kann nicht gelesen werden: {0}";
    PhNotUncertain => "that command is not uncertain", "dieser Befehl ist nicht ungewiss";
    PhReissueNeedsRunning => "Re-issue needs a running session: Resume first, then re-issue", "Erneut ausführen braucht eine laufende Sitzung: zuerst fortsetzen, dann erneut ausführen";
    PhReissueAgentWorking => "the agent is working on a message; re-issue when it is done", "der Agent arbeitet an einer Nachricht; führe erneut aus, wenn er fertig ist";
    PhStoreUnavailable => "the profile and credential store could not be opened or was closed by the browser ({0}); reload to retry", "der Speicher für Profile und Zugangsdaten konnte nicht geöffnet werden oder wurde vom Browser geschlossen ({0}); lade neu, um es erneut zu versuchen";
    PhStoreNewerSchema => "the profile and credential store was written by a newer Lifeline (schema above {0}); reload to get the newer version — nothing was changed", "der Speicher für Profile und Zugangsdaten wurde von einem neueren Lifeline geschrieben (Schema über {0}); lade neu, um die neuere Version zu erhalten — nichts wurde geändert";
    PhStoreBlocked => "another Lifeline tab is holding an older profile store open; close or reload the other tabs", "ein anderer Lifeline-Tab hält einen älteren Profilspeicher offen; schließe die anderen Tabs oder lade sie neu";
    PhStoreVersionChange => "a newer Lifeline in another tab is upgrading the profile store, so this tab closed its connection; reload this tab to continue", "ein neueres Lifeline in einem anderen Tab aktualisiert den Profilspeicher, daher hat dieser Tab seine Verbindung geschlossen; lade diesen Tab neu, um fortzufahren";
    PhStoreClosed => "the profile store connection was closed by this tab", "die Verbindung zum Profilspeicher wurde von diesem Tab geschlossen";
    PhStoreQuota => "the browser's storage for Lifeline is full: nothing was written and everything stored is kept; free space (delete old sessions or artifacts) and try again", "der Browserspeicher für Lifeline ist voll: nichts wurde geschrieben und alles Gespeicherte bleibt erhalten; schaffe Platz (lösche alte Sitzungen oder Artefakte) und versuche es erneut";
    PhStoreOperation => "profile store operation failed: {0}; nothing of it was written — it can be retried", "Vorgang im Profilspeicher fehlgeschlagen: {0}; davon wurde nichts geschrieben — er kann wiederholt werden";
    PhStoreInvalidProfile => "the profile cannot be stored: {0}", "das Profil kann nicht gespeichert werden: {0}";
    PhStoreStaleRevision => "the profile was changed elsewhere (stored revision {0}, this edit would be revision {1}); reload the profile and make the edit again", "das Profil wurde anderswo geändert (gespeicherte Revision {0}, diese Änderung wäre Revision {1}); lade das Profil neu und ändere es noch einmal";
    PhStoreTooManyProfiles => "there are already {0} profiles, the most Lifeline keeps; delete one you no longer need first", "es gibt bereits {0} Profile, mehr behält Lifeline nicht; lösche zuerst eines, das du nicht mehr brauchst";
    PhStoreTooManyCredentials => "there are already {0} credentials, the most Lifeline keeps; delete one you no longer need first", "es gibt bereits {0} Zugangsdaten, mehr behält Lifeline nicht; lösche zuerst welche, die du nicht mehr brauchst";
    PhStoreInvalidLabel => "a credential needs a label of 1 to {0} bytes (this one has {1}); nothing was saved", "Zugangsdaten brauchen eine Bezeichnung von 1 bis {0} Bytes (diese hat {1}); nichts wurde gespeichert";
    PhStoreInvalidSecret => "a credential's secret must be 1 to {0} bytes (this one has {1}); nothing was saved", "das Geheimnis von Zugangsdaten muss 1 bis {0} Bytes lang sein (dieses hat {1}); nichts wurde gespeichert";
    PhStoreCrypto => "the browser's WebCrypto could not protect the credential ({0}); nothing was saved — Lifeline needs a browser with crypto.subtle in workers (a secure context: https or localhost)", "WebCrypto des Browsers konnte die Zugangsdaten nicht schützen ({0}); nichts wurde gespeichert — Lifeline braucht einen Browser mit crypto.subtle in Workern (ein sicherer Kontext: https oder localhost)";
    PhStoreCorrupt => "a stored record is damaged: {0}; delete it in Profiles and enter it again", "ein gespeicherter Eintrag ist beschädigt: {0}; lösche ihn unter Profile und gib ihn neu ein";
    PhProfilesCannotOpen => "profiles and keys cannot be opened: {0}", "Profile und Schlüssel können nicht geöffnet werden: {0}";
    PhNoProfileMade => "no profile could be made: {0}", "es konnte kein Profil angelegt werden: {0}";
    PhMessageWaits => "your message waits for the agent ({0} waiting)", "deine Nachricht wartet auf den Agenten ({0} warten)";
    PhResumedWithoutProfile => "the profile this session ran with was deleted; it resumes without that profile's environment variables", "das Profil, mit dem diese Sitzung lief, wurde gelöscht; sie wird ohne dessen Umgebungsvariablen fortgesetzt";
    PhWorkspaceNotDeleted => "the workspace folder could not be deleted: {0}", "der Arbeitsbereich-Ordner konnte nicht gelöscht werden: {0}";
    PhEarlierLaunchAnswered => "an earlier launch (runtime {0}, generation {1}) had not been acknowledged; it answered and is used — nothing was launched twice", "ein früherer Start (Runtime {0}, Generation {1}) war nicht bestätigt; er hat geantwortet und wird verwendet — nichts wurde doppelt gestartet";
    PhEarlierLaunchRetired => "an earlier launch (runtime {0}, generation {1}) was recorded but never answered; whether it ran is unknown. It is retired and a new runtime starts", "ein früherer Start (Runtime {0}, Generation {1}) wurde aufgezeichnet, hat aber nie geantwortet; ob er lief, ist unbekannt. Er wird ausgemustert und eine neue Runtime startet";
    PhProfilesUnreadable => "profiles cannot be read: {0}", "Profile können nicht gelesen werden: {0}";
    PhProfilesNotOpen => "profiles are not open yet; try again in a moment", "Profile sind noch nicht geöffnet; versuche es gleich noch einmal";
    PhProfileSaved => "profile \"{0}\" saved", "Profil „{0}“ gespeichert";
    PhProfileNotSaved => "the profile was not saved: {0}", "das Profil wurde nicht gespeichert: {0}";
    PhProfileDeletedMeanwhile => "that profile was deleted meanwhile", "dieses Profil wurde inzwischen gelöscht";
    PhProfileNotDeleted => "the profile was not deleted: {0}", "das Profil wurde nicht gelöscht: {0}";
    PhNoIdMade => "no identifier could be made", "es konnte keine Kennung erzeugt werden";
    PhKeyNotStored => "the key was not stored: {0}", "der Schlüssel wurde nicht gespeichert: {0}";
    PhNoKeyForCommands => "there is no API key to give commands; enter one or clear that field", "es gibt keinen API-Schlüssel für Befehle; gib einen ein oder leere dieses Feld";
    PhProfileInvalid => "the profile is not valid: {0}", "das Profil ist ungültig: {0}";
    PfOtherOwner => "the profile belongs to \"{0}\", not this browser", "das Profil gehört „{0}“, nicht diesem Browser";
    PfName => "a profile needs a name of 1 to {0} bytes", "ein Profil braucht einen Namen von 1 bis {0} Bytes";
    PfBaseUrl => "the base URL must start with http:// or https://", "die Basis-URL muss mit http:// oder https:// beginnen";
    PfModelName => "the model name is empty or too long", "der Modellname ist leer oder zu lang";
    PfLocalName => "the model's name is empty or too long", "der Name des Modells ist leer oder zu lang";
    PfLocalSettingsTooLong => "the local model's settings are too long", "die Einstellungen des lokalen Modells sind zu lang";
    PfLocalSettingsUnreadable => "the local model's settings are unreadable", "die Einstellungen des lokalen Modells sind unlesbar";
    PfLocalFileFacts => "the model file's name or architecture is empty or too long", "Name oder Architektur der Modelldatei sind leer oder zu lang";
    PfLocalModelNameTooLong => "the model's name is too long", "der Name des Modells ist zu lang";
    PfLocalStoredName => "the stored model file's name must be letters, digits, - _ and .", "der Name der gespeicherten Modelldatei darf nur Buchstaben, Ziffern, - _ und . enthalten";
    PfLocalFileEmpty => "the model file is empty", "die Modelldatei ist leer";
    PfTemperatureText => "the temperature must be a number from 0 to 2, such as 0.7", "die Temperatur muss eine Zahl von 0 bis 2 sein, etwa 0.7";
    PfTopPText => "top-p must be a number above 0 and at most 1, such as 0.9", "Top-p muss eine Zahl über 0 und höchstens 1 sein, etwa 0.9";
    PfMaxTokensText => "max tokens must be a whole number of tokens", "Max. Antwort-Token muss eine ganze Zahl sein";
    PfContextText => "the context size must be a whole number of tokens", "die Kontextgröße muss eine ganze Zahl von Token sein";
    PfTemperature => "the temperature must be 0 to 2", "die Temperatur muss zwischen 0 und 2 liegen";
    PfTopP => "top-p must be above 0 and at most 1", "Top-p muss über 0 und höchstens 1 sein";
    PfContext => "the context size must be {0} to {1} tokens for this model", "die Kontextgröße muss für dieses Modell {0} bis {1} Token betragen";
    PfMaxTokens => "max tokens must be at least 1 and below the context size", "Max. Antwort-Token muss mindestens 1 und kleiner als die Kontextgröße sein";
    PfAttempts => "attempts per request must be 1 to {0}", "die Versuche je Anfrage müssen 1 bis {0} sein";
    PfRetryPeriod => "the retry period must be 1 to {0} seconds", "der Zeitraum für Wiederholungen muss 1 bis {0} Sekunden betragen";
    PfTimeouts => "timeouts must be 1 to {0} seconds", "Zeitlimits müssen 1 bis {0} Sekunden betragen";
    PfTooManyEnv => "a profile has at most {0} environment variables", "ein Profil hat höchstens {0} Umgebungsvariablen";
    PfEnvName => "environment variable name \"{0}\" must be letters, digits and _", "der Name der Umgebungsvariable „{0}“ darf nur Buchstaben, Ziffern und _ enthalten";
    PfEnvReserved => "{0} is set by the runtime and cannot be overridden", "{0} setzt die Runtime selbst; es kann nicht überschrieben werden";
    PfEnvTwice => "environment variable {0} is defined twice", "die Umgebungsvariable {0} ist doppelt definiert";
    PfEnvValueTooLong => "the value of {0} is too long", "der Wert von {0} ist zu lang";
    PhMessageTooLong => "the message is {0}; the limit is {1}", "die Nachricht hat {0}; die Grenze ist {1}";
    PhJournalDegraded => "the journal cannot be written: {0}", "in das Journal kann nicht geschrieben werden: {0}";
    PhPlanTooManyCommands => "the message holds {0} commands; one turn runs at most {1}", "die Nachricht enthält {0} Befehle; ein Durchgang führt höchstens {1} aus";
    PhPlanCommandTooLong => "the command on line {0} is longer than {1}", "der Befehl in Zeile {0} ist länger als {1}";
    PhSessionStoppedResend => "the session stopped before the message could be given to the agent; send it again", "die Sitzung wurde angehalten, bevor die Nachricht den Agenten erreichte; sende sie erneut";
    PhNoSessionToSend => "there is no session to send to", "es gibt keine Sitzung, an die gesendet werden kann";
    PhFollowingCannotSend => "this tab is following another tab that holds the journal; send from that tab, or close it and this one takes over", "dieser Tab folgt einem anderen Tab, der das Journal hält; sende von dort, oder schließe ihn, dann übernimmt dieser";
    PhMessageEmpty => "the message is empty", "die Nachricht ist leer";
    PhRequestRejected => "Lifeline refused a request its journal does not match ({0}); nothing was run or sent twice", "Lifeline hat eine Anfrage abgelehnt, zu der sein Journal nicht passt ({0}); nichts wurde doppelt ausgeführt oder gesendet";
    PhRejectedBusy => "the journal is catching up with earlier writes; try again shortly", "das Journal holt frühere Schreibvorgänge nach; versuche es gleich noch einmal";
    PhRejectedJournalFull => "the journal holds its limit of {0} commands; archive or delete old sessions first", "das Journal hat seine Grenze von {0} Befehlen erreicht; archiviere oder lösche zuerst alte Sitzungen";
    PhRejectedJournalUnavailable => "the journal cannot be written now, so nothing new is started; what is recorded is kept", "in das Journal kann gerade nicht geschrieben werden, daher wird nichts Neues begonnen; was aufgezeichnet ist, bleibt erhalten";
    PhRejectedTooManyClients => "{0} tabs or clients are already attached; close one first", "{0} Tabs oder Clients sind bereits verbunden; schließe zuerst einen";
    PhRejectedNotReissuable => "this command cannot be re-issued (it is not uncertain, or it was re-issued already); nothing was run", "dieser Befehl kann nicht erneut ausgeführt werden (er ist nicht ungewiss oder wurde schon erneut ausgeführt); nichts wurde ausgeführt";
    PhNoWebLocks => "this browser has no Web Locks; two tabs could not be kept from writing the journal at once", "dieser Browser hat keine Web Locks; zwei Tabs könnten gleichzeitig ins Journal schreiben";
    PhNoRandomness => "this browser gives the app no secure randomness, so it cannot mint identities that are never reused", "dieser Browser gibt der App keinen sicheren Zufall, daher kann sie keine Kennungen erzeugen, die nie wiederverwendet werden";
    PhLockFailed => "the browser's Web Locks failed, so this tab cannot tell whether another one writes the journal; reload the page", "die Web Locks des Browsers sind fehlgeschlagen, daher kann dieser Tab nicht erkennen, ob ein anderer ins Journal schreibt; lade die Seite neu";
    PhSnapshotFallback => "snapshot at position {0} is unreadable; loaded the previous snapshot at position {1} and the entries after it", "der Schnappschuss an Position {0} ist unlesbar; der vorige an Position {1} und die Einträge danach wurden geladen";
    PhSnapshotsUnreadable => "{0} snapshots unreadable (newest at position {1}); the journal is replayed from its first entry", "{0} Schnappschüsse unlesbar (neuester an Position {1}); das Journal wird ab seinem ersten Eintrag abgespielt";
    PhSnapshotsUnreadableOne => "{0} snapshot unreadable (at position {1}); the journal is replayed from its first entry", "{0} Schnappschuss unlesbar (an Position {1}); das Journal wird ab seinem ersten Eintrag abgespielt";
    PhSnapshotNotSaved => "a projection snapshot was not saved ({0}); the next start replays more of the journal", "ein Projektions-Schnappschuss wurde nicht gespeichert ({0}); der nächste Start spielt mehr vom Journal ab";
    PhRecordsQuarantined => "{0} journal records could not be read and were set aside in quarantine, where they are kept; the rest of the history loaded", "{0} Journaleinträge waren unlesbar und wurden in Quarantäne gelegt, wo sie erhalten bleiben; der restliche Verlauf wurde geladen";
    PhRecordsQuarantinedOne => "{0} journal record could not be read and was set aside in quarantine, where it is kept; the rest of the history loaded", "{0} Journaleintrag war unlesbar und wurde in Quarantäne gelegt, wo er erhalten bleibt; der restliche Verlauf wurde geladen";
    PhQuarantineNotMoved => "the unreadable records stay where they are: {0}", "die unlesbaren Einträge bleiben, wo sie sind: {0}";
    PhReplayRefused => "{0} journal entries, the first at position {1}, are missing or could not be replayed, and are not believed; nothing was deleted", "{0} Journaleinträge, der erste an Position {1}, fehlen oder konnten nicht abgespielt werden und gelten nicht; nichts wurde gelöscht";
    PhReplayRefusedOne => "the journal entry at position {1} is missing or could not be replayed, and is not believed; nothing was deleted", "der Journaleintrag an Position {1} fehlt oder konnte nicht abgespielt werden und gilt nicht; nichts wurde gelöscht";
    PhPersistConfirmFailed => "a write the browser confirmed could not be applied ({0}); it is in the journal and is read again at the next start", "ein vom Browser bestätigter Schreibvorgang konnte nicht angewendet werden ({0}); er steht im Journal und wird beim nächsten Start erneut gelesen";
    PhRuntimeNotJson => "runtime {0} sent a message that is not JSON text in a buffer; it was ignored", "Runtime {0} hat eine Nachricht gesendet, die kein JSON-Text in einem Puffer ist; sie wurde ignoriert";
    PhRuntimeMessageRejected => "a message from runtime {0} was not believed ({1}); nothing in it was recorded", "einer Nachricht von Runtime {0} wurde nicht geglaubt ({1}); nichts daraus wurde aufgezeichnet";
    PhFollowerUnreadable => "{0} journal records could not be read; the tab that leads sets them aside", "{0} Journaleinträge waren unlesbar; der führende Tab legt sie beiseite";
    PhFollowerUnreadableOne => "{0} journal record could not be read; the tab that leads sets it aside", "{0} Journaleintrag war unlesbar; der führende Tab legt ihn beiseite";
    PhNoBroadcastChannel => "this browser has no BroadcastChannel; other tabs will not follow live", "dieser Browser hat keinen BroadcastChannel; andere Tabs folgen nicht live";
    PhOtherBuild => "another tab runs a different Lifeline build; reload both tabs", "ein anderer Tab läuft mit einer anderen Lifeline-Version; lade beide Tabs neu";
    PhBroadcastRejected => "a message from another tab could not be read; it was ignored", "eine Nachricht eines anderen Tabs war unlesbar und wurde ignoriert";
    PhCatchUpFailed => "could not read the journal to catch up: {0}", "das Journal konnte zum Aufholen nicht gelesen werden: {0}";
    PhFollowGap => "journal entries {0} to {1} could not be read while following", "die Journaleinträge {0} bis {1} konnten beim Folgen nicht gelesen werden";
    PhEntryNotBelieved => "the journal entry at position {0} from the leading tab is not believed; it stays in the journal", "der Journaleintrag an Position {0} vom führenden Tab gilt nicht; er bleibt im Journal";
    PhPageNotJson => "the page sent a message that is not a JSON string; it was ignored", "die Seite hat eine Nachricht gesendet, die kein JSON-String ist; sie wurde ignoriert";
    PhPageMessageRejected => "a message from the page could not be read and was ignored; reload the page", "eine Nachricht der Seite war unlesbar und wurde ignoriert; lade die Seite neu";
    PhPageMessageTooLarge => "a message from the page had {0} bytes, more than the {1} allowed; it was ignored", "eine Nachricht der Seite hatte {0} Bytes, mehr als die erlaubten {1}; sie wurde ignoriert";
    PhPageOtherBuild => "the page speaks protocol {0} and its worker {1}; reload the page so both come from the same build", "die Seite spricht Protokoll {0} und ihr Worker {1}; lade die Seite neu, damit beide aus demselben Build stammen";
    PhPortMissing => "a runtime port message arrived without its port; the runtime cannot dial in", "eine Runtime-Port-Nachricht kam ohne ihren Port; die Runtime kann sich nicht verbinden";
    PhHistoryNotLoaded => "the part of the app that reads the saved history could not be loaded, so the history was not opened; nothing was read or changed — check the connection and reload", "der Teil der App, der den gespeicherten Verlauf liest, konnte nicht geladen werden, darum wurde der Verlauf nicht geöffnet; nichts wurde gelesen oder geändert — prüfe die Verbindung und lade neu";
    PhNotLoaded => "part of the app could not be loaded, so nothing was done; check the connection and try again", "ein Teil der App konnte nicht geladen werden, darum ist nichts geschehen; prüfe die Verbindung und versuche es erneut";
    PhExportNoJournal => "Export failed: the journal is not open.", "Export fehlgeschlagen: Das Journal ist nicht geöffnet.";
    PhExporting => "Exporting evidence…", "Nachweise werden exportiert…";
    PhExportFailed => "Export failed: {0}", "Export fehlgeschlagen: {0}";
    PhExportNoSession => "Export failed: the journal has no such session.", "Export fehlgeschlagen: Diese Sitzung steht nicht im Journal.";
    PhExportHandOff => "Export failed: could not hand the file to the page: {0}", "Export fehlgeschlagen: Die Datei konnte nicht an die Seite übergeben werden: {0}";
    PhExportedUnreadable => "Exported, but {0} unreadable journal values were left out.", "Exportiert, aber {0} unlesbare Journalwerte wurden ausgelassen.";
    PhExportedMissing => "Exported, but {0} artifacts were missing from storage.", "Exportiert, aber {0} Artefakte fehlten im Speicher.";
    PhExportedBoth => "Exported, but {0} unreadable journal values were left out and {1} artifacts were missing from storage.", "Exportiert, aber {0} unlesbare Journalwerte wurden ausgelassen und {1} Artefakte fehlten im Speicher.";
    PhImportTooLarge => "Import refused: {0} is {1}; the limit is {2}.", "Import abgelehnt: {0} hat {1}; die Grenze ist {2}.";
    PhUnaskedFile => "The page sent a file nobody asked for; it was ignored.", "Die Seite hat eine Datei gesendet, die niemand angefordert hat; sie wurde ignoriert.";
    PhImportTruncated => "Import failed: {0} arrived with {1} of {2}.", "Import fehlgeschlagen: {0} kam mit {1} von {2} an.";
    PhImportFailed => "Import of {0} failed: {1}", "Import von {0} fehlgeschlagen: {1}";
    PhImportNotAnArchive => "it is not a Lifeline evidence archive", "es ist kein Lifeline-Beweisarchiv";
    PhImportTooManyLines => "it has more than {0} lines, the most this build imports", "es hat mehr als {0} Zeilen, mehr als dieser Build importiert";
    PhImportLineTooLong => "line {0} is {1} bytes; the limit is {2}", "Zeile {0} hat {1} Bytes; die Grenze ist {2}";
    PhImportBadLine => "line {0} is not a record this build can read", "Zeile {0} ist kein Eintrag, den dieser Build lesen kann";
    PhImportNoSession => "its lines do not open exactly one session", "seine Zeilen eröffnen nicht genau eine Sitzung";
    EndStoppedBeforeOne => "Stopped before `{0}` ran; 1 planned command was not run.", "Angehalten, bevor `{0}` lief; 1 geplanter Befehl wurde nicht ausgeführt.";
    EndStoppedBeforeMany => "Stopped before `{0}` ran; {1} planned commands were not run.", "Angehalten, bevor `{0}` lief; {1} geplante Befehle wurden nicht ausgeführt.";
    EndBetweenSteps => "Stopped before the agent's next step.", "Vor dem nächsten Schritt des Agenten angehalten.";
    EndSessionLeft => "The session was left before this turn finished; nothing more ran in it.", "Die Sitzung wurde verlassen, bevor dieser Durchgang endete; darin lief nichts mehr.";
    EndReplyLost => "The model's reply was lost (the page or worker stopped while it was streaming); nothing was resent. Send the message again to ask anew.", "Die Antwort des Modells ging verloren (Seite oder Worker endeten während des Streamens); nichts wurde erneut gesendet. Sende die Nachricht noch einmal, um neu zu fragen.";
    EndCancelled => "Stopped: you cancelled `{0}`.", "Angehalten: Du hast `{0}` abgebrochen.";
    EndUncertain => "Stopped: the tool command `{0}` {1}, so I did not run it again. Send a message to continue from here.", "Angehalten: Der Werkzeugbefehl `{0}` {1}, daher habe ich ihn nicht erneut ausgeführt. Sende eine Nachricht, um von hier aus weiterzumachen.";
    EndLost => "was lost: it started but its runtime died before it finished", "ging verloren: er hatte begonnen, aber seine Runtime endete, bevor er fertig war";
    EndNotSent => "was never sent to a runtime, and its runtime is gone", "wurde nie an eine Runtime gesendet, und seine Runtime ist weg";
    EndUnknown => "may have started: its outcome is unknown", "hat vielleicht begonnen: sein Ergebnis ist unbekannt";
    EndBudget => "Stopped: the turn used its {0}. Nothing after that was run. Raise the limit under the profile's “Budget per turn”, or send a message to continue.", "Angehalten: Der Durchgang hat sein {0} aufgebraucht. Danach wurde nichts ausgeführt. Erhöhe die Grenze im Profil unter „Budget pro Runde“, oder sende eine Nachricht, um weiterzumachen.";
    EndSteps => "model request budget ({0})", "Budget an Modellanfragen ({0})";
    EndCommands => "command budget ({0})", "Befehlsbudget ({0})";
    EndTokens => "token budget ({0}; {1} used)", "Token-Budget ({0}; {1} verbraucht)";
    EndTime => "time budget ({0} s)", "Zeitbudget ({0} s)";
    EndReplyBroke => "The model's reply did not finish; what arrived is shown above, and nothing was resent (the request may have reached the model). Send the message again to ask anew.", "Die Antwort des Modells wurde nicht fertig; was ankam, steht oben, und nichts wurde erneut gesendet (die Anfrage hat das Modell vielleicht erreicht). Sende die Nachricht noch einmal, um neu zu fragen.";
    EndReplyStopped => "Stopped while the model was replying; what arrived is shown above.", "Angehalten, während das Modell antwortete; was ankam, steht oben.";
    EndRequestFailed => "The model request failed, as shown above; nothing more ran in this turn. Send the message again once the cause is fixed.", "Die Modellanfrage ist fehlgeschlagen, wie oben gezeigt; in diesem Durchgang lief nichts mehr. Sende die Nachricht noch einmal, sobald die Ursache behoben ist.";
}
