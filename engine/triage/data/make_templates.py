"""Write ``templates.jsonl``: template-generated triage messages for the model to learn from.

``python -m engine.triage.data.make_templates`` rewrites the file (deterministic: a fixed seed). For the
categories the held-out sets found weakest (suicide, seizures, danger signs in small children, burns, pregnancy,
poisoning, severe headache, bites) it combines who it is about (first and third person, regional words: "má tui", "ba em"), the lay
words for the presentation and a severity sign, in the three ways people type (with diacritics, without, in
chat spellings), and as many hard negatives built the same way: the same words with a negation, in the past,
mild, as a general question, or an idiom; and two families of hard negatives for every category: the same
emergency befalling a pet or farm animal (not a human emergency unless a person is hurt too), and the same
emergency asked about in advance, to learn ("nếu … thì sơ cứu thế nào", "dấu hiệu … là gì"). English rows
(``generate_english``): every category's emergencies in everyday English, and English hard negatives
(first-aid questions, past events already seen by a doctor, "I'm dying of boredom", pets). The rules are not generated from these; they are a second source for
the model only, next to the hand-written sets (docs/triage.md).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from engine.text import strip_diacritics

OUT = Path(__file__).parent / "templates.jsonl"
SEED = 14
PER_CATEGORY = 70  # positives per category (negatives: about as many)

ADULTS = ["bố tôi", "mẹ em", "vợ em", "chồng chị", "ông nội em", "bà ngoại tôi", "anh trai em", "chị gái tôi",
          "má tui", "ba tui", "ông hàng xóm", "bạn cùng phòng em", "đồng nghiệp của tôi", "cậu em"]
SELF = ["em", "tôi", "mình", "tui"]
CHILDREN = ["bé nhà em", "con em", "cháu tôi", "con gái chị", "thằng cu nhà em", "con bé", "bé"]
CHILD_AGES = ["2 tháng", "5 tháng", "8 tháng", "10 tháng", "1 tuổi", "18 tháng", "2 tuổi", "3 tuổi"]
NEWBORN = ["bé sơ sinh 6 ngày", "con em mới sinh được 10 ngày", "bé 3 tuần tuổi", "cháu tôi 20 ngày tuổi"]
PREGNANT = ["vợ em", "em", "chị em", "con dâu tôi", "tôi"]
ANIMALS = ["con chó nhà em", "con mèo nhà tôi", "bé cún nhà mình", "mèo nhà tui", "con gà nhà em", "con heo nhà tôi",
           "con bò nhà chú em", "chó cưng của chị", "bé mèo nhà em", "thú cưng nhà mình", "con vịt nhà bà"]

POSITIVE: dict[str, list[str]] = {
    "suicide": [
        "{a} nói không muốn sống nữa, đã gom thuốc ngủ", "{a} nhắn tin tạm biệt cả nhà rồi tắt máy",
        "{a} đang ngồi trên lan can sân thượng, gọi không nghe", "{s} không muốn sống nữa, tối nay {s} sẽ uống hết thuốc",
        "{s} muốn chết cho xong, {s} mua dây rồi", "{a} viết thư để lại cho con, nói đêm nay là xong",
        "{a} vừa rạch tay, máu chảy nhiều, nói không muốn sống", "{s} đang đứng trên cầu, {s} muốn nhảy xuống",
        "{a} uống thuốc trừ sâu để tự tử", "{s} thấy mình là gánh nặng, {s} định kết thúc tất cả",
        "{a} nói sống không bằng chết, đang cầm dao lam trong tay", "{s} nghĩ cách chết không đau suốt mấy hôm nay",
        "{a} treo cổ được cứu xuống, còn thở yếu", "{a} đốt than trong phòng kín, khóa cửa",
    ],
    "seizure": [
        "{a} đang co giật toàn thân hơn 5 phút chưa dừng", "{a} lên cơn động kinh liên tục, không tỉnh giữa các cơn",
        "{a} tự nhiên ngã ra giật tay chân, sùi bọt mép", "{a} co giật lần đầu, gọi không biết gì",
        "{a} người cứng đơ, mắt trợn ngược, giật giật liên tục", "{c} {age} sốt cao rồi co giật, môi tím",
        "{a} đang giật kinh 10 phút rồi", "{a} co giật hết cơn này đến cơn khác",
        "{a} bị tiểu đường, tự nhiên co giật", "{a} giật tay giật chân liên tục không ngừng",
    ],
    "child_danger": [
        "{c} {age} bỏ bú từ sáng, li bì, gọi khó dậy", "{c} {age} thở rút lõm lồng ngực, cánh mũi phập phồng",
        "{c} {age} nôn hết mọi thứ, không giữ được gì, mắt trũng", "{c} {age} tiêu chảy nhiều lần, khóc không có nước mắt, lừ đừ",
        "{c} {age} sốt cao, người mềm nhũn, không chịu chơi", "{c} {age} thóp phồng, nôn vọt",
        "{c} {age} nổi chấm tím khắp người, ấn không mất, sốt", "{n} sốt 38 độ rưỡi",
        "{n} bú yếu, người lạnh, ngủ suốt", "{n} vàng da tới lòng bàn chân",
        "{c} {age} tím tái, thở rít", "{c} {age} không tiểu từ sáng, môi khô, lơ mơ",
    ],
    "burn": [
        "{c} {age} bị đổ nồi canh nóng vào người, phồng rộp cả ngực", "{a} bị dầu sôi bắn vào mặt, phồng rộp",
        "{a} bị tạt axit vào người", "{a} bị bỏng nước sôi cả hai chân",
        "{c} {age} áp chân vào bô xe máy, da trắng bệch, không thấy đau", "{a} bị vôi tôi bắn vào mắt",
        "{a} bị nổ bình gas, cháy sém lông mày, ho ra đờm đen", "{a} bị bỏng điện, cháy đen chỗ dây điện chạm",
        "{a} bị xút văng vào mắt lúc thông cống", "{a} bị bỏng lửa rộng bằng ba bàn tay ở lưng",
        "nhà cháy, {a} hít nhiều khói, khàn tiếng, khó thở",
    ],
    "pregnancy": [
        "{p} bầu {w} tuần ra máu đỏ tươi nhiều", "{p} mang thai {w} tuần vỡ ối, nước ối màu xanh",
        "{p} bầu {w} tuần đau đầu dữ dội, nhìn mờ, phù mặt", "{p} có bầu {w} tuần từ hôm qua không thấy con đạp",
        "{p} bầu {w} tuần tự nhiên co giật", "{p} bầu {w} tuần đau bụng dữ dội, choáng",
        "{p} sau sinh 3 ngày ra máu ướt đẫm băng mỗi giờ", "{p} sau sinh mổ 1 tuần sốt cao, sản dịch hôi",
        "{p} trễ kinh 2 tuần, đau bụng dưới dữ dội, muốn xỉu", "{p} đang đau đẻ 3 phút một cơn, muốn rặn, xe chưa tới",
    ],
    "poisoning": [
        "{a} uống thuốc trừ sâu, nôn ói, sùi bọt", "{c} {age} uống nhầm nước tẩy bồn cầu",
        "{c} {age} nuốt mấy viên thuốc của bà", "{a} ăn nấm rừng, nôn mửa, đau bụng dữ dội",
        "{a} uống rượu tự nấu, mắt mờ, lơ mơ", "{a} uống cả vỉ thuốc ngủ, gọi không dậy",
        "{a} sưởi than trong phòng kín, đau đầu, nôn, lơ mơ", "{c} {age} uống nhầm dầu hỏa, ho sặc sụa",
        "{a} phun thuốc sâu xong chảy nước dãi, run giật cơ", "cả nhà ăn cá nóc, {a} tê miệng, khó thở",
    ],
    "severe_headache": [
        "{a} tự nhiên đau đầu như búa bổ, nôn vọt", "{a} đau đầu dữ dội nhất từ trước tới giờ, cổ cứng",
        "{a} đau đầu như sét đánh khi đang tập tạ, giờ lơ mơ", "{a} nhức đầu kinh khủng, sốt cao, cứng gáy",
        "{a} đau đầu chưa từng bị như vậy, nói lộn xộn", "{s} đau đầu như muốn nổ tung, nhìn mờ, tay tê",
        "{a} đau đầu khủng khiếp, uống thuốc giảm đau không ăn thua, nôn mấy lần", "{a} ôm đầu kêu đau rồi gục xuống",
        "{a} đau sau gáy dữ dội, không giống những lần đau nửa đầu trước", "{a} đau đầu dữ dội, huyết áp 210, mờ mắt",
    ],
    "bite_sting": [
        "{c} {age} bị con chó nhà hàng xóm cắn rách mặt, chảy máu nhiều", "{a} bị rắn cắn ở chân, sưng to, choáng",
        "{a} bị ong đốt mấy chục nốt, khó thở", "{c} {age} bị chó dại cắn vào tay",
        "con chó nhà em cắn {a}, vết cắn sâu, máu chảy không cầm", "{a} bị rắn lục cắn, chỗ cắn tím đen, chảy máu chân răng",
        "{a} bị ong vò vẽ đốt, nổi mề đay khắp người, tụt huyết áp", "{c} {age} bị mèo hoang cào cắn chảy máu nhiều ở mặt",
    ],
}
NEGATIVE: dict[str, list[str]] = {
    "suicide": [
        "mệt muốn chết vì deadline", "phim hôm qua nhân vật tự tử buồn quá", "{a} nóng quá muốn chết luôn",
        "{a} buồn vì mất việc, nên nói gì để động viên", "tự tử ở tuổi học đường có tăng không",
        "hồi xưa {s} từng có ý nghĩ tiêu cực, giờ đã ổn, có nên đi trị liệu tiếp", "{s} chán ăn mấy hôm nay vì áp lực",
        "{a} mất ngủ, uống thuốc ngủ lâu có hại không", "cười muốn chết với clip này",
    ],
    "seizure": [
        "mí mắt {s} giật cả tuần nay", "{c} {age} hay giật mình khi ngủ", "{a} bị chuột rút bắp chân ban đêm",
        "{a} bị động kinh đang uống thuốc đều, có cần tái khám không", "co giật do sốt ở trẻ có nguy hiểm không",
        "{c} {age} từng sốt co giật năm ngoái, giờ khỏe", "{a} không co giật, chỉ run tay khi lạnh",
    ],
    "child_danger": [
        "{c} {age} sốt nhẹ 37,8 độ, vẫn bú và chơi bình thường", "{c} {age} biếng ăn, chậm tăng cân",
        "{c} {age} hay ọc sữa sau bú, vẫn tăng cân đều", "{c} {age} thở khò khè nhẹ khi ngủ, ban ngày chơi bình thường",
        "{c} {age} không sốt, không nôn, chỉ hơi sổ mũi", "trẻ sơ sinh bao lâu thì rụng rốn",
        "{c} {age} hay vặn mình khi ngủ có sao không",
    ],
    "burn": [
        "{s} bị bỏng nhẹ đầu ngón tay bằng hạt đậu, bôi gì", "vết bỏng cũ năm ngoái của {a} để lại sẹo, làm sao mờ",
        "{a} bị cháy nắng đỏ rát sau đi biển", "ngồi dưới bóng mát cả chiều có sao không",
        "cách sơ cứu bỏng nước sôi cho trẻ", "{a} chườm nóng bụng có tốt không",
    ],
    "pregnancy": [
        "{p} bầu {w} tuần ốm nghén, ăn gì đỡ", "mang thai ăn dứa được không",
        "{p} sau sinh 2 tháng rụng tóc nhiều", "{p} bầu {w} tuần thỉnh thoảng gò nhẹ, bác sĩ bảo bình thường",
        "{p} bầu {w} tuần không ra máu, không đau bụng, khám thai định kỳ khi nào", "dấu hiệu sắp sinh là gì",
    ],
    "poisoning": [
        "thuốc diệt chuột loại nào an toàn cho nhà có trẻ nhỏ", "ăn nấm rơm có tốt không",
        "{a} uống sắt bị đi ngoài phân đen", "cách phòng ngộ độc thực phẩm mùa hè",
        "{a} bị ngộ độc thực phẩm nhẹ năm ngoái, giờ ăn uống bình thường", "dầu gió bôi ngoài da cho trẻ được không",
        "{pet} ăn phải bả chuột, sùi bọt mép, gần đây có thú y không", "{pet} ăn phải cá nóc, co giật",
    ],
    "severe_headache": [
        "{a} đau đầu nhẹ khi thiếu ngủ, uống nước là đỡ", "{s} hay đau nửa đầu mỗi khi căng thẳng, nên uống thuốc gì",
        "dấu hiệu đau đầu nguy hiểm là gì", "nếu đau đầu như sét đánh thì có cần gọi cấp cứu không",
        "{a} đau đầu dữ dội tuần trước, đã đi khám, giờ hết rồi", "{s} không đau đầu, chỉ hơi chóng mặt khi đứng dậy",
        "làm sao để nhận biết đau đầu do xuất huyết não", "{a} hơi nhức đầu vì nắng",
    ],
    "bite_sting": [
        "{pet} bị rắn cắn, chân sưng, nhưng vẫn ăn được", "{pet} bị chó khác cắn chảy máu, bệnh viện thú y nào mở đêm",
        "{pet} bị ong đốt sưng mõm", "{pet} bị xe tông gãy chân, chảy máu nhiều",
        "nếu bị rắn cắn thì sơ cứu thế nào", "khi nào bị chó cắn thì cần tiêm phòng dại",
        "{s} bị chó cắn năm ngoái, đã tiêm đủ phòng dại, giờ có cần tiêm nhắc không", "{pet} co giật, sùi bọt mép, phải làm sao",
    ],
}
# Asked in advance, to learn: the same emergencies, not happening (added to every category's negatives).
ADVANCE = [
    "nếu {a} bị {e} thì sơ cứu thế nào", "khi nào {e} thì cần gọi cấp cứu", "dấu hiệu {e} là gì",
    "làm sao để nhận biết {e}", "em hỏi trước để biết, {e} thì người nhà nên làm gì", "{e} có triệu chứng thế nào",
    "sơ cứu {e} cho trẻ như thế nào, em hỏi để biết",
]
EVENTS = {
    "suicide": "có ý định tự tử", "seizure": "co giật", "child_danger": "trẻ li bì bỏ bú", "burn": "bỏng nước sôi",
    "pregnancy": "bầu ra máu", "poisoning": "ngộ độc thuốc chuột", "severe_headache": "đau đầu dữ dội",
    "bite_sting": "rắn cắn",
}
WEEKS = ["24", "28", "30", "32", "34", "36"]
CHAT = [("không", "ko"), ("được", "dc"), ("rồi", "r"), ("gì", "j"), ("với", "vs")]


# English: messages from foreign residents and tourists, and Vietnamese who write in English (the seventh
# held-out set found most English emergencies missed). Generated with their own seed, after the Vietnamese rows,
# so those stay as they were.
EN_SEED = 15
EN_PER_CATEGORY = 12
EN_ADULTS = ["my dad", "my mom", "my husband", "my wife", "my grandpa", "my grandma", "my friend", "my brother",
             "my sister", "my uncle", "my coworker", "my roommate", "our neighbour", "my father-in-law"]
EN_SELF = ["i", "I"]
EN_CHILDREN = ["my son", "my daughter", "my baby", "my toddler", "my 3 year old", "our little girl", "my nephew"]
EN_POSITIVE: dict[str, list[str]] = {
    "chest_pain": ["{a} has crushing chest pain and is sweating", "{a} has chest pressure going into the left arm, pale and sweaty",
                   "{a} says his chest feels like an elephant is sitting on it", "sudden tight chest pain for 30 mins, short of breath, pls help"],
    "stroke": ["{a} suddenly can't lift her arm and her face is drooping", "{a}'s speech is slurred and one side of his face droops",
               "{a} is talking nonsense all of a sudden and can't move his right leg", "{a} woke up with weakness on one side and can't speak"],
    "suicide": ["{s} don't want to live anymore, I have the pills ready", "{a} texted goodbye and says she will kill herself tonight",
                "{s} am going to end it all tonight", "{a} took a whole bottle of sleeping pills on purpose"],
    "choking": ["{c} is choking on a grape and can't breathe", "{a} choked on meat, can't speak or cough, turning blue",
                "{c} swallowed a candy and is choking, face going purple"],
    "unconscious": ["{a} collapsed and isn't responding", "{a} passed out and we can't wake him up", "{a} is unconscious on the floor, breathing strangely",
                    "{a} is not breathing and has no pulse"],
    "seizure": ["{c} is having a seizure for 7 minutes, it's not stopping", "{a} is shaking all over and foaming at the mouth",
                "{a} had a fit and now another one, not waking between them"],
    "severe_bleeding": ["{a} cut his arm on glass, blood is spurting and won't stop", "{a} got stabbed, blood soaking through the towels",
                        "{a} is bleeding heavily from a deep cut on the leg"],
    "internal_bleeding": ["{a} is vomiting blood and feels faint", "{a} has black tarry stools and is very pale and dizzy", "{a} is coughing up blood, a lot"],
    "poisoning": ["{c} drank some bleach", "{a} drank pesticide", "{c} swallowed a handful of my pills", "{a} ate wild mushrooms and is vomiting and confused"],
    "swallowed_object": ["{c} swallowed a button battery", "{c} swallowed two small magnets", "{c} swallowed a coin and is drooling, can't swallow"],
    "bite_sting": ["a snake bit {a} in the field, leg swelling fast", "{a} was stung by a swarm of bees, face swelling",
                   "a stray dog bit {c} on the face, deep wounds"],
    "burn": ["{a} spilled boiling oil on her legs, big blisters", "{c} pulled a pot of hot soup onto himself, chest skin peeling",
             "{a} got burned in a gas fire, face and hands charred"],
    "electric_shock": ["{a} got electrocuted by a power line, has burns and chest pain", "{c} touched a socket and got an electric shock, now pale and quiet"],
    "drowning": ["{c} was pulled out of the pool, coughing and breathing fast", "{a} nearly drowned at the beach, vomiting water, very sleepy"],
    "heatstroke": ["{a} was working in the sun, now confused, skin hot and dry", "{a} collapsed in the heat, not sweating and talking nonsense"],
    "head_injury": ["{c} hit his head on concrete, vomiting and very sleepy", "{a} fell off the ladder and hit her head, now confused",
                    "{a} hit his head in a crash, clear fluid coming from his nose"],
    "major_trauma": ["motorbike crash, {a}'s thigh is bent the wrong way and he's pale", "{a} fell from the roof and can't move his legs",
                     "{a} was hit by a truck, bone sticking out of the leg"],
    "anaphylaxis": ["{c} ate peanuts, now his tongue is swelling and he's wheezing", "{a} got a bee sting and her throat is closing",
                    "after the antibiotic injection {a} has hives everywhere and can't breathe"],
    "breathing": ["{c} is wheezing badly and her lips are blue, inhaler not working", "{a} can't breathe, gasping for air, can't finish a sentence",
                  "{a} is struggling to breathe, lips turning grey"],
    "hypoglycaemia": ["{a} is diabetic, shaking, confused and sweating, sugar reads 45", "{a} on insulin is very drowsy and won't wake up properly, sugar 2.1",
                      "low sugar, {a} is confused and can't swallow"],
    "sepsis": ["{a} has a fever, is confused and her skin is mottled", "{a} has a high fever with a purple rash that doesn't fade",
               "dengue day 5, {a} is vomiting with belly pain and bleeding gums"],
    "pregnancy": ["{p} is 34 weeks pregnant with a terrible headache and blurry vision", "{p} is 30 weeks pregnant and bleeding heavily",
                  "{p} is 36 weeks pregnant and can't feel the baby moving since morning"],
    "child_danger": ["{c}, 2 months old, is not feeding and very floppy", "my 3 week old baby has a fever and is hard to wake",
                     "my baby is grunting, chest sucking in, very sleepy"],
    "severe_headache": ["worst headache of my life, came on in seconds", "{a} has a sudden severe headache with a stiff neck and vomiting"],
    "hypertensive_crisis": ["{a}'s BP is 220/130 with chest pain and blurred vision", "blood pressure 210/125, severe headache and confused"],
    "dental_airway": ["tooth abscess, swelling under my jaw going down my neck, hard to swallow", "wisdom tooth swelling spreading to the neck, trouble breathing"],
    "dental_bleeding": ["bleeding a lot after tooth extraction, soaked 10 gauzes, feeling faint", "the extraction socket won't stop bleeding for 5 hours, mouthful of blood"],
    "facial_trauma": ["{c} fell off his bike, jaw looks crooked, mouth bleeding heavily", "{a} was punched, cheekbone looks broken and he can't open his mouth"],
    "diabetic_foot": ["{a}'s diabetic foot wound smells rotten, there's pus and he's feverish", "{a} has diabetes, the toe is black and she has a fever"],
    "hyperglycaemia": ["blood sugar over 30 for two days, vomiting and breathing fast, type 1", "{a} has high sugar, ketones high, vomiting and confused"],
    "acute_abdomen": ["severe belly pain in the right lower side, fever, can't walk upright", "{a}'s hernia is stuck and won't go back in, vomiting",
                      "{a} has terrible stomach pain, belly hard as a board"],
}
EN_NEGATIVE = [
    # first-aid questions, asked in advance or to learn
    "what should I do if someone has a seizure", "how to recognise a stroke", "what are the signs of a heart attack",
    "first aid for burns, asking for a first aid course", "how do you treat a snake bite, just curious",
    "is bleach poisonous if swallowed", "when should I call an ambulance for chest pain", "what are the symptoms of heat stroke",
    "how to help a choking baby, I want to learn", "what causes low blood sugar", "signs of dehydration in babies",
    # past events, over, already seen by a doctor
    "{a} had a stroke two years ago, what should he eat now", "{c} had a febrile seizure last year, is it hereditary",
    "{a} fainted yesterday, the doctor said it was fine", "{s} had chest pain last week, the ECG was normal",
    "{c} swallowed a coin last month, it came out, all fine", "{a} was bitten by a dog years ago, does he need a rabies booster",
    # figurative, hyperbole, jokes
    "this homework is killing me lol", "I'm dying of boredom at work", "I'm dying to see the new movie", "my boss will give me a heart attack haha",
    "that joke killed me lol", "I almost died laughing",
    # pets and farm animals
    "my dog ate chocolate and is vomiting", "our cat is having a seizure", "my puppy got bitten by a snake", "the chicken at home is choking",
    # ordinary questions
    "how much is teeth cleaning", "is metformin safe for long term use", "what should my fasting glucose be", "mild headache since morning, can I take paracetamol",
    "a bit short of breath after running, is that normal", "my gums bleed a little when brushing", "slight fever and runny nose for two days",
    "{c} has a mild cough, no fever, eating well", "{a} has no chest pain anymore, just tired",
]
EN_EXTRA = [" pls help", " what do we do", " what should I do", ", help", "", "", ""]


def generate_english(seed: int = EN_SEED) -> list[dict[str, object]]:
    """English rows: the positives with their category, the hard negatives unlabelled (``category`` empty)."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    seen: set[str] = set()

    def fill(template: str) -> str:
        return template.format(a=rng.choice(EN_ADULTS), s=rng.choice(EN_SELF), c=rng.choice(EN_CHILDREN),
                               p=rng.choice(["my wife", "I", "my sister", "my daughter-in-law"]))

    for category, templates in EN_POSITIVE.items():
        for _ in range(EN_PER_CATEGORY * 4):
            if sum(1 for r in rows if r["category"] == category) >= EN_PER_CATEGORY:
                break
            text = fill(rng.choice(templates)) + rng.choice(EN_EXTRA)
            if text not in seen:
                seen.add(text)
                rows.append({"text": text, "emergency": True, "category": category})
    for template in EN_NEGATIVE:
        for _ in range(3):
            text = fill(template)
            if text not in seen:
                seen.add(text)
                rows.append({"text": text, "emergency": False, "category": ""})
    return rows


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        a=rng.choice(ADULTS), s=rng.choice(SELF), c=rng.choice(CHILDREN), age=rng.choice(CHILD_AGES),
        n=rng.choice(NEWBORN), p=rng.choice(PREGNANT), w=rng.choice(WEEKS), pet=rng.choice(ANIMALS),
    )


def _typed(text: str, rng: random.Random) -> str:
    """As typed: with diacritics, without them, or in chat spellings (a third each)."""
    way = rng.randrange(3)
    if way == 1:
        return strip_diacritics(text)
    if way == 2:
        for word, chat in CHAT:
            text = text.replace(word, chat)
    return text


def generate(seed: int = SEED) -> list[dict[str, object]]:
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    seen: set[str] = set()
    for category in POSITIVE:
        advance = [t.replace("{e}", EVENTS[category]) for t in ADVANCE]
        for emergency, templates in ((True, POSITIVE[category]), (False, NEGATIVE[category] + advance)):
            want = PER_CATEGORY if emergency else PER_CATEGORY * 3 // 4
            tries = 0
            made = 0
            while made < want and tries < want * 20:
                tries += 1
                text = _typed(_fill(rng.choice(templates), rng), rng)
                text = text[0].upper() + text[1:] if rng.random() < 0.5 else text
                if text in seen:
                    continue
                seen.add(text)
                made += 1
                rows.append({"text": text, "emergency": emergency, "category": category})
    return rows


def main() -> int:
    rows = generate() + generate_english()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} rows written to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
