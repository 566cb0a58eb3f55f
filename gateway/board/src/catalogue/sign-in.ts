// The strings of the sign-in and password pages, in English and French: the French
// catalogue is typed by the English keys, so a key missing from it (or one it adds) does not compile.
export const en = {
  "session.expires": "Session ends in {time}",
  "session.signOut": "Sign out",
  "session.expired": "Your session ended. Sign in again.",
  "signIn.title": "Sign in",
  "signIn.login": "Login",
  "signIn.password": "Password",
  "signIn.submit": "Sign in",
  "password.title": "Choose a new password",
  "password.why": "Your password is temporary: choose your own before anything else.",
  "password.current": "Current password",
  "password.new": "New password",
  "password.repeat": "New password again",
  "password.mismatch": "The two new passwords differ.",
  "password.submit": "Change password",
  "password.done": "Password changed. Sign in with the new one.",
} as const;

export const fr: Record<keyof typeof en, string> = {
  "session.expires": "Session terminée dans {time}",
  "session.signOut": "Se déconnecter",
  "session.expired": "Votre session est terminée. Reconnectez-vous.",
  "signIn.title": "Connexion",
  "signIn.login": "Identifiant",
  "signIn.password": "Mot de passe",
  "signIn.submit": "Se connecter",
  "password.title": "Choisir un nouveau mot de passe",
  "password.why": "Votre mot de passe est provisoire : choisissez le vôtre avant toute chose.",
  "password.current": "Mot de passe actuel",
  "password.new": "Nouveau mot de passe",
  "password.repeat": "Nouveau mot de passe (encore)",
  "password.mismatch": "Les deux nouveaux mots de passe diffèrent.",
  "password.submit": "Changer le mot de passe",
  "password.done": "Mot de passe changé. Connectez-vous avec le nouveau.",
};
