package merge

// MatchLines exposes the line diff to the external tests.
var MatchLines = matchLines
