// A user transaction's authenticator (aptos-core types/src/transaction/authenticator.rs,
// types/src/keyless/, types/src/transaction/webauthn.rs), walked to its end. Keys and
// signatures are byte vectors in BCS. A variant not listed here is an UNKNOWN_VARIANT: the
// page finds the transaction's end by its hash instead (new schemes arrive every few months).
import { type BcsCursor, UNKNOWN_VARIANT } from './cursor.js';

/** TransactionAuthenticator: 0 Ed25519, 1 MultiEd25519, 2 MultiAgent, 3 FeePayer, 4 SingleSender. */
export function skipTransactionAuthenticator(c: BcsCursor): void {
  switch (c.uleb()) {
    case 0: // Ed25519 { public_key, signature }
    case 1: // MultiEd25519 { public_key, signature }
      c.skipBytes();
      c.skipBytes();
      return;
    case 2: // MultiAgent { sender, secondary_signer_addresses, secondary_signers }
      skipAccountAuthenticator(c);
      c.skipFixedSequence(32);
      c.skipSequence(skipAccountAuthenticator);
      return;
    case 3: // FeePayer { sender, secondary_signer_addresses, secondary_signers, fee_payer_address, fee_payer_signer }
      skipAccountAuthenticator(c);
      c.skipFixedSequence(32);
      c.skipSequence(skipAccountAuthenticator);
      c.skip(32);
      skipAccountAuthenticator(c);
      return;
    case 4: // SingleSender { sender }
      skipAccountAuthenticator(c);
      return;
    default:
      throw UNKNOWN_VARIANT;
  }
}

/** AccountAuthenticator: 0 Ed25519, 1 MultiEd25519, 2 SingleKey, 3 MultiKey, 4 NoAccountAuthenticator, 5 Abstraction. */
function skipAccountAuthenticator(c: BcsCursor): void {
  switch (c.uleb()) {
    case 0:
    case 1:
      c.skipBytes();
      c.skipBytes();
      return;
    case 2: // SingleKeyAuthenticator { public_key, signature }
      skipAnyPublicKey(c);
      skipAnySignature(c);
      return;
    case 3: // MultiKeyAuthenticator { MultiKey { public_keys, signatures_required: u8 }, signatures, signatures_bitmap: BitVec }
      c.skipSequence(skipAnyPublicKey);
      c.skip(1);
      c.skipSequence(skipAnySignature);
      c.skipBytes();
      return;
    case 4:
      return;
    case 5: // Abstraction { function_info: FunctionInfo { module_address, module_name, function_name }, auth_data }
      c.skip(32);
      c.skipBytes();
      c.skipBytes();
      skipAbstractionAuthData(c);
      return;
    default:
      throw UNKNOWN_VARIANT;
  }
}

/** 0 V1 { signing_message_digest, authenticator }, 1 DerivableV1 { signing_message_digest, abstract_signature, abstract_public_key }. */
function skipAbstractionAuthData(c: BcsCursor): void {
  const variant = c.uleb();
  if (variant > 1) throw UNKNOWN_VARIANT;
  c.skipBytes();
  c.skipBytes();
  if (variant === 1) c.skipBytes();
}

/** AnyPublicKey: 0 Ed25519, 1 Secp256k1Ecdsa, 2 Secp256r1Ecdsa, 3 Keyless, 4 FederatedKeyless, 5 SlhDsa_Sha2_128s. */
function skipAnyPublicKey(c: BcsCursor): void {
  switch (c.uleb()) {
    case 0:
    case 1:
    case 2:
    case 5:
      c.skipBytes();
      return;
    case 3:
      skipKeylessPublicKey(c);
      return;
    case 4: // FederatedKeylessPublicKey { jwk_addr, pk }
      c.skip(32);
      skipKeylessPublicKey(c);
      return;
    default:
      throw UNKNOWN_VARIANT;
  }
}

/** KeylessPublicKey { iss_val: String, idc: IdCommitment(bytes) }. */
function skipKeylessPublicKey(c: BcsCursor): void {
  c.skipBytes();
  c.skipBytes();
}

/** AnySignature: 0 Ed25519, 1 Secp256k1Ecdsa, 2 WebAuthn, 3 Keyless, 4 SlhDsa_Sha2_128s. */
function skipAnySignature(c: BcsCursor): void {
  switch (c.uleb()) {
    case 0:
    case 1:
    case 4:
      c.skipBytes();
      return;
    case 2:
      skipPartialAuthenticatorAssertionResponse(c);
      return;
    case 3:
      skipKeylessSignature(c);
      return;
    default:
      throw UNKNOWN_VARIANT;
  }
}

/** { signature: AssertionSignature (0 Secp256r1Ecdsa { signature }), authenticator_data, client_data_json }. */
function skipPartialAuthenticatorAssertionResponse(c: BcsCursor): void {
  if (c.uleb() !== 0) throw UNKNOWN_VARIANT;
  c.skipBytes();
  c.skipBytes();
  c.skipBytes();
}

/** KeylessSignature { cert, jwt_header_json, exp_date_secs: u64, ephemeral_pubkey, ephemeral_signature }. */
function skipKeylessSignature(c: BcsCursor): void {
  skipEphemeralCertificate(c);
  c.skipBytes();
  c.skip(8);
  // EphemeralPublicKey: 0 Ed25519 { public_key }, 1 Secp256r1Ecdsa { public_key }.
  if (c.uleb() > 1) throw UNKNOWN_VARIANT;
  c.skipBytes();
  skipEphemeralSignature(c);
}

/** EphemeralSignature: 0 Ed25519 { signature }, 1 WebAuthn { signature }. */
function skipEphemeralSignature(c: BcsCursor): void {
  const variant = c.uleb();
  if (variant === 0) c.skipBytes();
  else if (variant === 1) skipPartialAuthenticatorAssertionResponse(c);
  else throw UNKNOWN_VARIANT;
}

/** EphemeralCertificate: 0 ZeroKnowledgeSig, 1 OpenIdSig. */
function skipEphemeralCertificate(c: BcsCursor): void {
  const variant = c.uleb();
  if (variant === 0) {
    // ZeroKnowledgeSig { proof: ZKP (0 Groth16 { a: 32, b: 64, c: 32 }), exp_horizon_secs: u64,
    // extra_field: Option<String>, override_aud_val: Option<String>, training_wheels_signature: Option<EphemeralSignature> }
    if (c.uleb() !== 0) throw UNKNOWN_VARIANT;
    c.skip(32 + 64 + 32 + 8);
    if (c.option()) c.skipBytes();
    if (c.option()) c.skipBytes();
    if (c.option()) skipEphemeralSignature(c);
  } else if (variant === 1) {
    // OpenIdSig { jwt_sig, jwt_payload_json, uid_key, epk_blinder, pepper: [u8; 31], idc_aud_val: Option<String> }
    c.skipBytes();
    c.skipBytes();
    c.skipBytes();
    c.skipBytes();
    c.skip(31);
    if (c.option()) c.skipBytes();
  } else throw UNKNOWN_VARIANT;
}
