//! Idempotency keys derived from where a command comes from: a built-in
//! agent's planned command from its turn and place in the plan, a model's
//! tool call from its turn, request and place among the calls. Derived, so
//! that the agent, the projection and the view all find the same command
//! again without storing which turn it belongs to, and so that a step
//! taken again after a crash is admitted under the key it had.

use sha2::{Digest as _, Sha256};

use crate::id::{IdempotencyKey, TurnId};

/// The idempotency key of the `index`th planned command of `turn`.
pub fn plan_key(turn: TurnId, index: usize) -> IdempotencyKey {
    derived_key(
        b"lifeline built-in agent plan key\0",
        &[&turn.as_u128().to_be_bytes(), &(index as u64).to_be_bytes()],
    )
}

/// The first 128 bits of SHA-256 over `domain` and `parts`, as a key.
pub(crate) fn derived_key(domain: &[u8], parts: &[&[u8]]) -> IdempotencyKey {
    let mut h = Sha256::new();
    h.update(domain);
    for part in parts {
        h.update(part);
    }
    let bytes = h.finalize();
    let mut raw = [0u8; 16];
    raw.copy_from_slice(&bytes[..16]);
    // Ids must be nonzero; a zero prefix of SHA-256 will not happen, but the
    // type's rule is kept rather than assumed.
    IdempotencyKey::from_u128(u128::from_be_bytes(raw).max(1))
        .unwrap_or_else(|_| IdempotencyKey::from_u128(1).expect("1 is a valid id"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ProviderRequestId;
    use crate::model::tool_key;

    fn key_of(bytes: &[u8]) -> IdempotencyKey {
        let digest = Sha256::digest(bytes);
        let mut raw = [0u8; 16];
        raw.copy_from_slice(&digest[..16]);
        IdempotencyKey::from_u128(u128::from_be_bytes(raw)).unwrap()
    }

    /// Keys already in journals must come out the same: the domain, then
    /// each part's big-endian bytes, as written out here.
    #[test]
    fn derived_keys_are_the_bytes_journals_already_hold() {
        let turn = TurnId::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677).unwrap();
        let request = ProviderRequestId::from_u128(0xfeed).unwrap();
        for index in [0usize, 1, 63] {
            let mut bytes = b"lifeline built-in agent plan key\0".to_vec();
            bytes.extend(turn.as_u128().to_be_bytes());
            bytes.extend((index as u64).to_be_bytes());
            assert_eq!(plan_key(turn, index), key_of(&bytes));
            let mut bytes = b"lifeline model tool call key\0".to_vec();
            bytes.extend(turn.as_u128().to_be_bytes());
            bytes.extend(request.as_u128().to_be_bytes());
            bytes.extend((index as u64).to_be_bytes());
            assert_eq!(tool_key(turn, request, index), key_of(&bytes));
        }
    }
}
