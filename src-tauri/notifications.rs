//! OS notifications on Linux desktops: the freedesktop Notifications service over D-Bus
//! (the `dbus` crate the keyring already links), with a "default" action so a click opens
//! the session. One background thread owns the connection; without a notification service
//! (no session bus, no daemon) notifications are logged and dropped.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Duration;

use crate::attention::{ClickCallback, Notification, Notifier};

/// How long the thread waits for D-Bus messages before looking for new notifications.
const TICK: Duration = Duration::from_millis(250);

/// Notifications through `org.freedesktop.Notifications`.
pub struct DbusNotifier {
    tx: std::sync::Mutex<Option<mpsc::Sender<(Notification, ClickCallback)>>>,
}

impl Default for DbusNotifier {
    fn default() -> Self {
        Self::new()
    }
}

impl DbusNotifier {
    /// A notifier whose thread starts with the first notification.
    pub fn new() -> Self {
        DbusNotifier {
            tx: std::sync::Mutex::new(None),
        }
    }

    fn sender(&self) -> Option<mpsc::Sender<(Notification, ClickCallback)>> {
        let mut tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        if tx.is_none() {
            let (send, recv) = mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("cairn-notify".into())
                .spawn(move || serve(recv));
            match spawned {
                Ok(_) => *tx = Some(send),
                Err(e) => tracing::warn!(error = %e, "no notification thread"),
            }
        }
        tx.clone()
    }
}

impl Notifier for DbusNotifier {
    fn notify(&self, n: Notification, clicked: ClickCallback) {
        let Some(tx) = self.sender() else { return };
        if tx.send((n, clicked)).is_err() {
            tracing::info!("the notification service is unavailable; notification dropped");
        }
    }
}

#[cfg(target_os = "linux")]
fn serve(recv: mpsc::Receiver<(Notification, ClickCallback)>) {
    use dbus::blocking::Connection;
    use dbus::message::MatchRule;
    use std::sync::{Arc, Mutex};

    let conn = match Connection::new_session() {
        Ok(c) => c,
        Err(e) => {
            tracing::info!(error = %e, "no D-Bus session: notifications are not shown");
            return;
        }
    };
    let clicks: Arc<Mutex<HashMap<u32, ClickCallback>>> = Arc::default();
    let on_action = clicks.clone();
    let rule = MatchRule::new_signal("org.freedesktop.Notifications", "ActionInvoked");
    let matched = conn.add_match(rule, move |(id, action): (u32, String), _, _| {
        if action == "default" {
            let f = on_action
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
            if let Some(f) = f {
                f();
            }
        }
        true
    });
    if let Err(e) = matched {
        tracing::info!(error = %e, "notification clicks are not heard");
    }
    let proxy = conn.with_proxy(
        "org.freedesktop.Notifications",
        "/org/freedesktop/Notifications",
        Duration::from_secs(5),
    );
    loop {
        loop {
            match recv.try_recv() {
                Ok((n, clicked)) => {
                    let hints: dbus::arg::PropMap = HashMap::new();
                    let sent: Result<(u32,), dbus::Error> = proxy.method_call(
                        "org.freedesktop.Notifications",
                        "Notify",
                        (
                            "Cairn",
                            0u32,
                            "dialog-question",
                            n.title.as_str(),
                            n.body.as_str(),
                            vec!["default", "Open"],
                            hints,
                            -1i32,
                        ),
                    );
                    match sent {
                        Ok((id,)) => {
                            clicks
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .insert(id, clicked);
                        }
                        Err(e) => tracing::info!(error = %e, "cannot show a notification"),
                    }
                }
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => return,
            }
        }
        if let Err(e) = conn.process(TICK) {
            tracing::info!(error = %e, "the D-Bus session ended: no more notifications");
            return;
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn serve(recv: mpsc::Receiver<(Notification, ClickCallback)>) {
    for (n, _) in recv {
        tracing::info!(session = %n.session_id, "notification (not shown here): {}", n.body);
    }
}
