package cdcunify;

/** A value its type cannot read: the image is quarantined `invalid_value` with this reason
 * (cdc_unify.canonical.CanonicalError, same texts). */
final class CanonicalError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CanonicalError(String message) {
        super(message, null, false, false);
    }
}
