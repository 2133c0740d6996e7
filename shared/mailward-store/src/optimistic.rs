//! Optimistic concurrency: every stored item carries a version, and a write names the version it
//! read. When another write got there first the write fails with a conflict
//! ([`StoreError::is_conflict`]); what to do then depends on who wrote meanwhile, so the caller
//! decides through [`retry_on_conflict`].

use mailward_domain::store::StoreError;
use std::future::Future;

/// What a conflicting write should do next.
#[derive(Debug)]
pub enum OnConflict<T> {
    /// Try again with this fresh input (read after the conflict).
    Retry(T),
    /// Give up: the conflict is real (another person changed what this write decided on).
    GiveUp,
}

/// Runs `attempt` with `input`; when it fails with a version conflict, asks `on_conflict` for a
/// fresh input and runs it again, at most `max_attempts` times in all. Any other error, a
/// `GiveUp` or the last conflict is returned as it is. The one retry loop every
/// read-modify-write uses (domain update and delete racing the sweep, and later services).
pub async fn retry_on_conflict<I, T, E, A, AF, C, CF>(
    max_attempts: u32,
    mut input: I,
    mut attempt: A,
    mut on_conflict: C,
) -> Result<T, E>
where
    E: From<StoreError> + AsConflict,
    A: FnMut(I) -> AF,
    AF: Future<Output = Result<T, E>>,
    C: FnMut() -> CF,
    CF: Future<Output = Result<OnConflict<I>, E>>,
{
    let mut tries = 0;
    loop {
        tries += 1;
        match attempt(input).await {
            Ok(done) => return Ok(done),
            Err(e) if e.is_conflict() && tries < max_attempts => match on_conflict().await? {
                OnConflict::Retry(fresh) => input = fresh,
                OnConflict::GiveUp => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
}

/// Errors that can say whether they are a lost optimistic race.
pub trait AsConflict {
    /// Whether this error is a version conflict.
    fn is_conflict(&self) -> bool;
}

impl AsConflict for StoreError {
    fn is_conflict(&self) -> bool {
        StoreError::is_conflict(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_is_retried_with_fresh_input_until_the_limit() {
        let runtime = std::sync::Mutex::new(Vec::new());
        let result: Result<u32, StoreError> = futures_lite_block_on(retry_on_conflict(
            3,
            1u32,
            |n| {
                runtime.lock().unwrap().push(n);
                async move {
                    if n < 3 {
                        Err(StoreError::ConditionFailed)
                    } else {
                        Ok(n * 10)
                    }
                }
            },
            || {
                let next = runtime.lock().unwrap().last().copied().unwrap_or(0) + 1;
                async move { Ok(OnConflict::Retry(next)) }
            },
        ));
        assert_eq!(result.unwrap(), 30);
        assert_eq!(*runtime.lock().unwrap(), vec![1, 2, 3]);

        let gave_up: Result<u32, StoreError> = futures_lite_block_on(retry_on_conflict(
            3,
            1u32,
            |_| async { Err(StoreError::ConditionFailed) },
            || async { Ok(OnConflict::GiveUp) },
        ));
        assert!(gave_up.unwrap_err().is_conflict());

        let other: Result<u32, StoreError> = futures_lite_block_on(retry_on_conflict(
            3,
            1u32,
            |_| async { Err(StoreError::Unavailable("down".into())) },
            || async { Ok(OnConflict::Retry(2)) },
        ));
        assert!(!other.unwrap_err().is_conflict());
    }

    /// Polls a future that never waits on I/O to completion.
    fn futures_lite_block_on<F: Future>(future: F) -> F::Output {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut future = std::pin::pin!(future);
        loop {
            if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
        }
    }
}
