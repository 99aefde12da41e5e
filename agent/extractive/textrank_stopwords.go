package extractive

import "strings"

// trStopwords are the English words that carry no topic, folded: function
// words, and the commonest verbs, adverbs and number words. The paper
// keeps only nouns and adjectives with a part-of-speech tagger; a longer
// stop list is the offline approximation. Neither a sentence's overlap
// with another nor a key term counts them.
var trStopwords = make(map[string]bool)

func init() {
	for _, w := range strings.Fields(`
		a about above across after afterwards again against ago all almost alone along already also
		although always am among amongst an and another any anybody anyone anything anyway anywhere
		are around as at away back be became because become becomes becoming been before beforehand
		began begin begins behind being below beside besides between beyond both but by came can
		cannot could did do does doing done down during each early either else elsewhere enough
		especially etc even ever every everybody everyone everything everywhere far few fifth first
		five for former formerly four from further furthermore gave get gets getting give given gives
		go goes going gone got had has have having he hence her here hers herself him himself his
		how however i if in indeed instead into is it its itself just kept keep keeps last later
		latter least less let like likely made make makes making many may maybe me meanwhile might
		mine more moreover most mostly much must my myself near nearly neither never nevertheless
		new next nine no nobody none nor not nothing now nowhere of off often old on once one only
		onto or other others otherwise our ours ourselves out over own part per perhaps put quite
		rather really said same say says second see seem seemed seems seen several shall she should
		since six so some somebody somehow someone something sometimes somewhat somewhere still such
		take taken takes ten than that the their theirs them themselves then thence there thereafter
		thereby therefore these they thing things third this those though three through throughout
		thus to together too took toward towards twice two under unless until up upon us use used
		uses using usually very via was way we well were what whatever when whence whenever where
		whereas whereby wherever whether which while who whoever whole whom whose why will with
		within without would yet you your yours yourself yourselves
		eg ie vs cf al
	`) {
		trStopwords[w] = true
	}
}
