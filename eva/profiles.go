package eva

// profiles are Eva's seven, with their ids, labels, modules and starter
// sections as the standard has them, and guidance written for cairn.
var profiles = []Profile{
	{
		ID: "personal", Label: "Personal", Modules: []string{"goals", "observations", "journal", "timeline"},
		Starter: "Personal compass", Sections: []string{"Goals", "Observations", "Reflections", "Questions to revisit"},
		MaintenanceFocus:    "keep goals, observations and reflections apart, and follow patterns over time without diagnosing or judging the person",
		IngestGuidance:      "record what the source says about the person's goals, habits and events as observations with their dates; link them to the goals they bear on; never turn a feeling into a fact or a pattern into a diagnosis",
		MaintenanceGuidance: "look for goals without recent observations, observations that contradict a stated goal, undated journal entries and questions left to revisit",
		Types: []Type{
			{"goal", "Something the person wants to reach, with its state.",
				"requires: [title, status]\nfields:\n  status: {enum: [active, paused, reached, dropped]}\n  since: date\n  updated: date\n"},
			{"journal", "One dated entry of the journal.",
				"requires: [title, date]\nfields:\n  date: date\n  mood: string\n"},
		},
	},
	{
		ID: "research", Label: "Research", Modules: []string{"thesis", "evidence", "contradictions", "bibliography"},
		Starter: "Research frame", Sections: []string{"Question or thesis", "Evidence to collect", "Competing explanations", "Open questions"},
		MaintenanceFocus:    "separate claims from the evidence for them, keep competing explanations side by side, and mark what is unresolved",
		IngestGuidance:      "state the source's claims and the evidence it offers for each, separately; cite the source on every claim; update the competing explanations it supports or weakens, and record contradictions with other sources instead of choosing a side",
		MaintenanceGuidance: "look for claims without evidence, evidence cited by no claim, contradictions not yet recorded, and bibliography entries no summary uses",
		Types: []Type{
			{"claim", "A statement the research weighs, with the sources for and against it.",
				"requires: [title]\nrecommends: [sources]\nfields:\n  status: {enum: [open, supported, contested, refuted]}\n  sources: string\n"},
			{"reference", "A work in the bibliography.",
				"requires: [title, author]\nrecommends: [year]\nfields:\n  author: string\n  year: {type: integer, min: 0, max: 3000}\n  url: {type: string, format: uri}\n  doi: {type: string, pattern: '^10\\.'}\n"},
		},
	},
	{
		ID: "reading", Label: "Reading companion", Modules: []string{"chapters", "characters", "threads", "themes"},
		Starter: "Reading companion", Sections: []string{"Work", "Chapters", "Characters and places", "Threads and themes"},
		MaintenanceFocus:    "follow the work chapter by chapter, and keep to the reader's spoiler boundary: nothing from beyond the chapter they have reached",
		IngestGuidance:      "note each chapter's events, the characters and places they involve and the threads they advance; say which chapter every fact comes from, and never reveal anything beyond the furthest chapter ingested",
		MaintenanceGuidance: "look for characters without a first appearance, threads left open, chapters without a summary and any page that reveals more than the chapters read",
		Types: []Type{
			{"chapter", "One chapter of the work.",
				"requires: [title, number]\nfields:\n  number: {type: integer, min: 0}\n  work: link\n"},
			{"character", "A character of the work, as far as the reader has read.",
				"requires: [title]\nrecommends: [first_appearance]\nfields:\n  first_appearance: link to chapter\n"},
		},
	},
	{
		ID: "business", Label: "Business record", Modules: []string{"projects", "decisions", "meetings", "risks"},
		Starter: "Operating brief", Sections: []string{"Current priorities", "Decisions", "Risks and assumptions", "Owners and follow-up"},
		MaintenanceFocus:    "keep decisions with their owners and dates, risks with their owners, and never record an agreement the sources do not show",
		IngestGuidance:      "record decisions with who made them, when and why; meetings with their attendees and outcomes; risks and assumptions as such; attribute every commitment to the person who made it, and do not invent agreement between stakeholders",
		MaintenanceGuidance: "look for decisions without an owner, open risks without a follow-up, projects whose status is stale and assumptions written as facts",
		Types: []Type{
			{"project", "A piece of work with an owner and a state.",
				"requires: [title, status]\nrecommends: [owner]\nfields:\n  status: {enum: [proposed, active, paused, done, cancelled]}\n  owner: string\n  due: date\nwhen:\n  - field: status\n    is: done\n    then: {recommends: [finished]}\n"},
			{"decision", "A decision, with who made it and when.",
				"requires: [title, date, status]\nrecommends: [owner]\nfields:\n  date: date\n  owner: string\n  status: {enum: [proposed, accepted, superseded, reversed]}\nwhen:\n  - field: status\n    is: superseded\n    then: {requires: [superseded_by]}\n"},
			{"meeting", "A meeting with its attendees and outcomes.",
				"requires: [title, date]\nfields:\n  date: date\n  attendees: list of string\n"},
			{"risk", "A risk or an assumption, with its owner.",
				"requires: [title, status]\nrecommends: [owner]\nfields:\n  status: {enum: [open, mitigated, accepted, closed]}\n  likelihood: {enum: [low, medium, high]}\n  impact: {enum: [low, medium, high]}\n  owner: string\n"},
		},
	},
	{
		ID: "planning", Label: "Planning", Modules: []string{"objectives", "constraints", "options", "timeline"},
		Starter: "Planning brief", Sections: []string{"Objective", "Constraints", "Options", "Decisions and next steps"},
		MaintenanceFocus:    "keep the objective, its constraints and the options weighed against them in view, with dated next steps",
		IngestGuidance:      "record objectives, constraints and options separately; for each option, what speaks for and against it against the constraints; put dates on the timeline only where a source gives them",
		MaintenanceGuidance: "look for options not weighed against the constraints, next steps without a date or owner, and constraints no option respects",
		Types: []Type{
			{"objective", "What the plan is for.",
				"requires: [title]\nfields:\n  due: date\n  status: {enum: [open, reached, dropped]}\n"},
			{"option", "One way to reach an objective, weighed.",
				"requires: [title, status]\nfields:\n  status: {enum: [open, chosen, rejected]}\n  objective: link to objective\n"},
		},
	},
	{
		ID: "course", Label: "Course and learning", Modules: []string{"concepts", "materials", "practice", "revision"},
		Starter: "Learning map", Sections: []string{"Learning goals", "Core concepts", "Practice", "Revision queue"},
		MaintenanceFocus:    "build the course's concepts with their definitions, examples and dependencies, and keep practice and revision in step with them",
		IngestGuidance:      "extract the concepts with their definitions, examples, common misconceptions and the concepts they depend on; note practice exercises and what they train; link each concept to the material it comes from",
		MaintenanceGuidance: "look for concepts without a definition or an example, dependencies that point to missing concepts, and concepts no practice trains",
		Types: []Type{
			{"material", "A lecture, reading or video of the course.",
				"requires: [title]\nfields:\n  kind: {enum: [lecture, reading, video, notes, exercise-sheet]}\n  week: {type: integer, min: 0}\n"},
			{"exercise", "A practice exercise, with the concepts it trains.",
				"requires: [title]\nrecommends: [trains]\nfields:\n  trains: list of link to concept\n  solved: boolean\n"},
		},
	},
	{
		ID: "blank", Label: "Blank / custom", Modules: []string{"knowledge-base"},
		Starter: "Starting point", Sections: []string{"Focus", "Useful entities and concepts", "Questions"},
		MaintenanceFocus:    "keep the wiki linked, sourced and free of duplicates, for whatever the brain's purpose is",
		IngestGuidance:      "integrate the source into the entities and concepts it concerns, preferring existing pages, and keep its provenance",
		MaintenanceGuidance: "look for orphans, duplicated subjects, unsourced claims and pages the index does not reach",
	},
}
