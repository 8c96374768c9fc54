export const leaked: 1 = "TFMARKf8bbe165-the server's cwd";
