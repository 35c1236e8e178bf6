// A counter raised whenever credentials may have stopped holding in this process (a token revoked,
// deactivated, regenerated or deleted; a password changed; a user removed), so that long-lived
// responses re-check their caller only after such a change instead of before every event.
let epoch = 0;

export const credentialsChanged = (): void => void epoch++;
export const credentialsEpoch = (): number => epoch;
