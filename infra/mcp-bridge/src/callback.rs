//! The loopback callback: one `GET /callback?code=…&state=…` from the person's browser, the
//! state checked against the request's (CSRF), a short page shown, the code handed back.

use anyhow::{anyhow, bail};
use axum::extract::{Query, State};
use axum::response::Html;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// How long the person has to sign in.
const SIGN_IN_WINDOW: Duration = Duration::from_secs(600);

type Outcome = Result<String, String>;
type Slot = Arc<Mutex<Option<oneshot::Sender<Outcome>>>>;

struct Callback {
    state: String,
    slot: Slot,
}

async fn callback(
    State(cb): State<Arc<Callback>>,
    Query(params): Query<HashMap<String, String>>,
) -> Html<&'static str> {
    let outcome = if params.get("state") != Some(&cb.state) {
        Err("the callback's state is not this sign-in's".to_owned())
    } else if let Some(error) = params.get("error") {
        Err(format!(
            "{error}: {}",
            params
                .get("error_description")
                .map(String::as_str)
                .unwrap_or("")
        ))
    } else if let Some(code) = params.get("code") {
        Ok(code.clone())
    } else {
        Err("the callback carried no code".to_owned())
    };
    let page = if outcome.is_ok() {
        "<!doctype html><title>Mailward</title><p>Signed in. You can close this tab and return to your assistant.</p>"
    } else {
        "<!doctype html><title>Mailward</title><p>The sign-in did not complete; see your assistant's log.</p>"
    };
    if let Some(sender) = cb.slot.lock().expect("slot").take() {
        let _ = sender.send(outcome);
    }
    Html(page)
}

/// Serves the callback on `listener` until it is called once; the authorization code.
pub async fn wait_for_code(
    listener: tokio::net::TcpListener,
    state: &str,
) -> anyhow::Result<String> {
    let (sender, receiver) = oneshot::channel();
    let cb = Arc::new(Callback {
        state: state.to_owned(),
        slot: Arc::new(Mutex::new(Some(sender))),
    });
    let router = axum::Router::new()
        .route("/callback", axum::routing::get(callback))
        .with_state(cb);
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let outcome = tokio::time::timeout(SIGN_IN_WINDOW, receiver).await;
    // Let the page reach the browser before the listener goes.
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.abort();
    match outcome {
        Err(_) => bail!(
            "no sign-in within {} minutes",
            SIGN_IN_WINDOW.as_secs() / 60
        ),
        Ok(Err(_)) => Err(anyhow!("the callback server stopped")),
        Ok(Ok(Ok(code))) => Ok(code),
        Ok(Ok(Err(reason))) => bail!("sign-in refused: {reason}"),
    }
}
